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
  // The payment processor did not answer, or failed, while checking what was given
  // (docs/dashboard-api.md): nothing wrong with the input, so not `invalid_param`.
  processor_unavailable: 502,
} as const;

export type ErrorType = keyof typeof ERROR_STATUS;
export const ERROR_TYPES = Object.keys(ERROR_STATUS) as ErrorType[];

export interface ErrorBody {
  error: { type: ErrorType; message: string };
}

export interface ServiceErrorOptions {
  retryAfterSeconds?: number;
  /** The field the refusal is about: see ServiceError.param. */
  param?: string;
  /** A finer reason than the type: see ServiceError.code. */
  code?: ErrorCode;
  /** The objects the refusal is about, as they are now: see ServiceError.objects. */
  objects?: Readonly<Record<string, unknown>>;
}

/**
 * Finer reasons a dashboard page branches on, within a type (as Stripe's `error.code`):
 * - `member_removed`: an `authentication_required` for a session of a person removed from the team
 *   since, so the sign-in page says so rather than that the session ended;
 * - `endpoint_changed`: a `conflict` for an endpoint edit made from a page that saw other values
 *   than the endpoint has now (updateEndpoint's `expected`), carrying the endpoint as it is now
 *   (ServiceError.objects), so the page shows it;
 * - `overlap_open`: a `conflict` for a roll of a signing secret while the last roll's overlap is
 *   open and not ended on purpose, so a page that did not know of that roll reads it again;
 * - `campaign_closed`: a `conflict` for a mark of a campaign closed meanwhile (by a person, the
 *   processor or the stale-campaign sweep), so the page reads it again and says who and when.
 */
export type ErrorCode = 'member_removed' | 'endpoint_changed' | 'overlap_open' | 'campaign_closed';

/** An expected, client-facing failure. Anything else that is thrown is a bug or an outage. */
export class ServiceError extends Error {
  readonly type: ErrorType;
  /** How long to wait before trying again, sent as `Retry-After` (a rate limit's refusal). */
  readonly retryAfterSeconds: number | undefined;
  /**
   * The field an `invalid_param` refusal is about (`current_password`, `events[2]`), set where
   * the refusal is made, never read back out of the message. The dashboard API sends it as
   * `param` so a page can show the refusal at that field; `/api/v1` and the CLI show only the
   * message, which names the field too (`field: reason`, see invalidField).
   */
  readonly param: string | undefined;
  /** Sent by the dashboard API as `code` (ErrorCode); `/api/v1` and the CLI show the message only. */
  readonly code: ErrorCode | undefined;
  /**
   * The objects a refusal is about, as they are now, by name (`endpoint` with `endpoint_changed`):
   * the dashboard API sends each inside `error` under its name, as Stripe's errors carry the
   * `payment_intent` they are about, so a page shows it without asking again. `/api/v1` and the CLI
   * show the message only.
   */
  readonly objects: Readonly<Record<string, unknown>> | undefined;

  constructor(type: ErrorType, message: string, options: ServiceErrorOptions = {}) {
    super(message);
    this.name = 'ServiceError';
    this.type = type;
    this.retryAfterSeconds = options.retryAfterSeconds;
    this.param = options.param;
    this.code = options.code;
    this.objects = options.objects;
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

/** Bad input as a whole ("The request body is not valid JSON."), about no one field. */
export const invalidParam = (message: string) => new ServiceError('invalid_param', message);
/**
 * Bad input in one field: the message is `field: reason` (`url: must begin with https://`),
 * meaningful on its own to an API client or a CLI user, and the error carries the field as
 * `param` for the dashboard.
 */
export const invalidField = (param: string, reason: string) =>
  new ServiceError('invalid_param', `${param}: ${reason}`, { param });
export const notFound = (message: string) => new ServiceError('not_found', message);
/** An illegal state change; `details` carries what a page reads beyond the words (its `code`, the object as it is now). */
export const conflict = (message: string, details: Pick<ServiceErrorOptions, 'code' | 'objects'> = {}) =>
  new ServiceError('conflict', message, details);
export const forbidden = (message: string) => new ServiceError('forbidden', message);
export const processorUnavailable = (message: string) => new ServiceError('processor_unavailable', message);
export const authenticationRequired = (message: string, details: Pick<ServiceErrorOptions, 'code'> = {}) =>
  new ServiceError('authentication_required', message, details);
export const rateLimited = (message: string, waitMs: number) =>
  new ServiceError('rate_limit_exceeded', message, { retryAfterSeconds: Math.max(1, Math.ceil(waitMs / 1000)) });
export const invalidCredentials = () =>
  new ServiceError('invalid_credentials', 'The email address or the password is not right.');
