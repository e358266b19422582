/**
 * Every failure of a client call is a RetentionError. Branch on `error.type` (or on the
 * class with `instanceof`): the API's error types each have a class of their own, and the
 * two failures that never reached a well-formed answer (the network, and a response that
 * is not the API's JSON) have theirs.
 */

export interface ErrorDetails {
  type: string;
  message: string;
  /** HTTP status of the response; null when no response arrived. */
  status: number | null;
  /** The `Request-Id` response header: quote it when reporting a problem. */
  requestId: string | null;
}

export class RetentionError extends Error {
  override readonly name: string = 'RetentionError';
  readonly type: string;
  readonly status: number | null;
  readonly requestId: string | null;

  constructor(details: ErrorDetails, options?: ErrorOptions) {
    super(details.message, options);
    this.type = details.type;
    this.status = details.status;
    this.requestId = details.requestId;
  }
}

/** The API answered with its error document `{ error: { type, message } }`. */
export class ApiError extends RetentionError {
  override readonly name: string = 'ApiError';
  declare readonly status: number;

  constructor(details: ErrorDetails & { status: number }, options?: ErrorOptions) {
    super(details, options);
  }
}

/** 401: no Authorization header was sent. */
export class AuthenticationRequiredError extends ApiError {
  override readonly name = 'AuthenticationRequiredError';
  declare readonly type: 'authentication_required';
}

/** 401: the token is malformed, unknown or revoked. */
export class InvalidTokenError extends ApiError {
  override readonly name = 'InvalidTokenError';
  declare readonly type: 'invalid_token';
}

/** 400: a parameter or an id is invalid; the message names it. */
export class InvalidParamError extends ApiError {
  override readonly name = 'InvalidParamError';
  declare readonly type: 'invalid_param';
}

/** 404: no such resource in the token's workspace. */
export class NotFoundError extends ApiError {
  override readonly name = 'NotFoundError';
  declare readonly type: 'not_found';
}

/** 429: over the rate limit, and waiting would have exceeded `maxRetryWaitSeconds`. */
export class RateLimitError extends ApiError {
  override readonly name = 'RateLimitError';
  declare readonly type: 'rate_limit_exceeded';
  /** The `Retry-After` header: seconds until a request will be accepted again. */
  readonly retryAfterSeconds: number | null;

  constructor(details: ErrorDetails & { status: number; retryAfterSeconds: number | null }, options?: ErrorOptions) {
    super(details, options);
    this.retryAfterSeconds = details.retryAfterSeconds;
  }
}

/** 500: a server-side failure that persisted through the client's retries. */
export class DatabaseError extends ApiError {
  override readonly name = 'DatabaseError';
  declare readonly type: 'database_error';
}

/** The API could not be reached, or did not answer within `timeoutSeconds`. */
export class ConnectionError extends RetentionError {
  override readonly name = 'ConnectionError';
  declare readonly type: 'connection_error';
  declare readonly status: null;
  readonly timedOut: boolean;

  constructor(message: string, timedOut: boolean, options?: ErrorOptions) {
    super({ type: 'connection_error', message, status: null, requestId: null }, options);
    this.timedOut = timedOut;
  }
}

/**
 * A response that is not the API's JSON: an HTML page from a proxy, a redirect, a body
 * that does not parse. Usually a wrong `baseUrl` or something between the client and the API.
 */
export class UnexpectedResponseError extends RetentionError {
  override readonly name = 'UnexpectedResponseError';
  declare readonly type: 'unexpected_response';
  declare readonly status: number;
  /** The start of the response body, for diagnosis. */
  readonly body: string;
  /** The `Retry-After` header in seconds, when the response had one (a gateway's 429 or 503). */
  readonly retryAfterSeconds: number | null;

  constructor(details: {
    message: string;
    status: number;
    requestId: string | null;
    body: string;
    retryAfterSeconds?: number | null;
  }) {
    super({ ...details, type: 'unexpected_response' });
    this.body = details.body;
    this.retryAfterSeconds = details.retryAfterSeconds ?? null;
  }
}

/** The error types of the API (the API reference, "Errors"), each with its class and HTTP status. */
export const API_ERRORS = {
  authentication_required: { status: 401, errorClass: AuthenticationRequiredError },
  invalid_token: { status: 401, errorClass: InvalidTokenError },
  invalid_param: { status: 400, errorClass: InvalidParamError },
  not_found: { status: 404, errorClass: NotFoundError },
  rate_limit_exceeded: { status: 429, errorClass: RateLimitError },
  database_error: { status: 500, errorClass: DatabaseError },
} as const;

export type ApiErrorType = keyof typeof API_ERRORS;

/** The error for an API error document; a type this version does not know is a plain ApiError. */
export function apiErrorFor(details: ErrorDetails & { status: number; retryAfterSeconds: number | null }): ApiError {
  switch (details.type) {
    case 'rate_limit_exceeded':
      return new RateLimitError(details);
    case 'authentication_required':
    case 'invalid_token':
    case 'invalid_param':
    case 'not_found':
    case 'database_error':
      return new API_ERRORS[details.type].errorClass(details);
    default:
      return new ApiError(details);
  }
}
