import Stripe from 'stripe';

/**
 * The official library, pointed at STRIPE_API_BASE (https://api.stripe.com in production; a
 * local server in tests). The key never leaves this object: the library sends it as the
 * bearer token and keeps it out of its errors.
 */
export function createStripeClient(apiKey: string, apiBase: string): Stripe {
  const base = new URL(apiBase);
  return new Stripe(apiKey, {
    host: base.hostname,
    ...(base.port !== '' && { port: base.port }),
    protocol: base.protocol === 'http:' ? 'http' : 'https',
    maxNetworkRetries: 2,
    timeout: 10_000,
    appInfo: { name: 'retention-service' },
  });
}

/** The key was refused (rolled or revoked): the connection cannot use it any more. */
export function isKeyRejected(error: unknown): boolean {
  return error instanceof Stripe.errors.StripeAuthenticationError || statusOf(error) === 401;
}

/** No answer from Stripe at all (refused, reset, timed out: after the library's retries). */
export function isStripeUnreachable(error: unknown): boolean {
  return error instanceof Stripe.errors.StripeConnectionError;
}

export function isRateLimited(error: unknown): boolean {
  return error instanceof Stripe.errors.StripeRateLimitError || statusOf(error) === 429;
}

export function isNotFound(error: unknown): boolean {
  return statusOf(error) === 404;
}

function statusOf(error: unknown): number | undefined {
  return typeof error === 'object' && error !== null && 'statusCode' in error && typeof error.statusCode === 'number'
    ? error.statusCode
    : undefined;
}

/** Seconds Stripe asked us to wait (Retry-After), when it said. */
export function retryAfterMs(error: unknown): number | null {
  const headers = (error as { headers?: Record<string, string> } | null)?.headers;
  const value = headers?.['retry-after'];
  const seconds = value === undefined ? NaN : Number(value);
  return Number.isFinite(seconds) && seconds >= 0 ? Math.min(60_000, seconds * 1000) : null;
}

export class StripeKeyRejectedError extends Error {
  constructor() {
    super('Stripe refused the API key (401): it was rolled or revoked');
    this.name = 'StripeKeyRejectedError';
  }
}

/**
 * Tries a key with the cheapest call its restricted permissions allow (one customer).
 * `rejected` on 401; anything else that fails is thrown (Stripe unreachable is not a verdict).
 */
export async function checkStripeKey(apiKey: string, apiBase: string): Promise<'accepted' | 'rejected'> {
  try {
    await createStripeClient(apiKey, apiBase).customers.list({ limit: 1 });
    return 'accepted';
  } catch (error) {
    if (isKeyRejected(error)) return 'rejected';
    throw error;
  }
}
