/**
 * The error catalog: every error type the service reports, with its HTTP status. The API
 * answers with `{ error: { type, message } }`; the operator CLI prints the same shape.
 */
export const ERROR_STATUS = {
  authentication_required: 401,
  invalid_token: 401,
  invalid_param: 400,
  not_found: 404,
  rate_limit_exceeded: 429,
  database_error: 500,
  // Operator (CLI / dashboard) errors: never produced by the read-only API.
  forbidden: 403,
  conflict: 409,
  // The dashboard's own (docs/dashboard-api.md).
  invalid_credentials: 401,
  payload_too_large: 413,
} as const;

export type ErrorType = keyof typeof ERROR_STATUS;
export const ERROR_TYPES = Object.keys(ERROR_STATUS) as ErrorType[];

export interface ErrorBody {
  error: { type: ErrorType; message: string };
}

/** An expected, client-facing failure. Anything else that is thrown is a bug or an outage. */
export class ServiceError extends Error {
  readonly type: ErrorType;
  /** How long to wait before trying again, sent as `Retry-After` (a rate limit's refusal). */
  readonly retryAfterSeconds: number | undefined;

  constructor(type: ErrorType, message: string, options: { retryAfterSeconds?: number } = {}) {
    super(message);
    this.name = 'ServiceError';
    this.type = type;
    this.retryAfterSeconds = options.retryAfterSeconds;
  }

  get status(): number {
    return ERROR_STATUS[this.type];
  }

  toBody(): ErrorBody {
    return errorBody(this.type, this.message);
  }
}

export function errorBody(type: ErrorType, message: string): ErrorBody {
  return { error: { type, message } };
}

export const invalidParam = (message: string) => new ServiceError('invalid_param', message);
export const notFound = (message: string) => new ServiceError('not_found', message);
export const conflict = (message: string) => new ServiceError('conflict', message);
export const forbidden = (message: string) => new ServiceError('forbidden', message);
export const authenticationRequired = (message: string) => new ServiceError('authentication_required', message);
export const rateLimited = (message: string, waitMs: number) =>
  new ServiceError('rate_limit_exceeded', message, { retryAfterSeconds: Math.max(1, Math.ceil(waitMs / 1000)) });
export const invalidCredentials = () =>
  new ServiceError('invalid_credentials', 'The e-mail address or the password is not right.');
