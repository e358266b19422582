export {
  CAMPAIGN_LIST_PARAMS,
  CANCEL_SESSION_LIST_PARAMS,
  Client,
  CUSTOMER_LIST_PARAMS,
  CampaignsResource,
  CancelSessionsResource,
  CustomersResource,
  StatsResource,
  type CampaignListParams,
  type CancelSessionListParams,
  type ClientOptions,
  type CustomerListParams,
} from './client.js';
export {
  API_ERRORS,
  ApiError,
  AuthenticationRequiredError,
  ConnectionError,
  DatabaseError,
  InvalidParamError,
  InvalidTokenError,
  NotFoundError,
  RateLimitError,
  RetentionError,
  UnexpectedResponseError,
  type ApiErrorType,
  type ErrorDetails,
} from './errors.js';
export * from './events.js';
export type { CursorParams } from './pagination.js';
export * from './resources.js';
export type { RateLimitInfo } from './transport.js';
export { SDK_VERSION } from './version.js';
export {
  webhookEventOf,
  webhookMiddleware,
  type WebhookMiddleware,
  type WebhookMiddlewareOptions,
  type WebhookRefusal,
} from './webhooks/middleware.js';
export {
  DEFAULT_TOLERANCE_SECONDS,
  parseSignatureHeader,
  SIGNATURE_HEADER,
  verifyWebhook,
  WebhookHeaderError,
  WebhookPayloadError,
  WebhookSignatureError,
  WebhookTimestampError,
  WebhookVerificationError,
  type ParsedSignatureHeader,
  type VerifyWebhookOptions,
  type WebhookVerificationFailure,
} from './webhooks/verify.js';
