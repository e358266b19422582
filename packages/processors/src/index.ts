export * from './stripe/apply.js';
export * from './stripe/backfill.js';
export { checkStripeKey, createStripeClient } from './stripe/client.js';
export * from './stripe/connect.js';
export { HANDLED_EVENT_TYPES, stripeEventToChanges, type StripeEventEnvelope } from './stripe/normalise.js';
export { SIGNATURE_TOLERANCE_SECONDS, StripeSignatureRefused, verifyStripeEvent } from './stripe/verify.js';
