import type Stripe from 'stripe';
import { scrubSecrets } from '@retention/core';
import { loadStripe } from './library.js';

/**
 * The official library, pointed at STRIPE_API_BASE (https://api.stripe.com in production; a
 * local server in tests). The key never leaves this object: the library sends it as the
 * bearer token and keeps it out of its errors.
 */
export async function createStripeClient(apiKey: string, apiBase: string): Promise<Stripe> {
  const base = new URL(apiBase);
  const Library = await loadStripe();
  return new Library(apiKey, {
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
  return isInstance(error, 'StripeAuthenticationError') || statusOf(error) === 401;
}

/** No answer from Stripe at all (refused, reset, timed out: after the library's retries). */
export function isStripeUnreachable(error: unknown): boolean {
  return isInstance(error, 'StripeConnectionError');
}

export function isRateLimited(error: unknown): boolean {
  return isInstance(error, 'StripeRateLimitError') || statusOf(error) === 429;
}

export function isNotFound(error: unknown): boolean {
  return statusOf(error) === 404;
}

/**
 * An error of the library's class `name`, by the `type` it gives each of its errors (Stripe's
 * documented way to tell them apart), so that no check waits for the library to load.
 */
function isInstance(
  error: unknown,
  name: 'StripeAuthenticationError' | 'StripeConnectionError' | 'StripeRateLimitError' | 'StripePermissionError',
): boolean {
  return typeof error === 'object' && error !== null && 'type' in error && error.type === name;
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

/** Stripe refused the key a permission (403): a restricted key without read access to that resource. */
export function isPermissionDenied(error: unknown): boolean {
  return isInstance(error, 'StripePermissionError') || statusOf(error) === 403;
}

/**
 * A lookup refused for a permission the restricted key lacks (403), in words the owner reads in
 * `processor status` and on the Settings, Processor page: what could not be learnt, Stripe's own
 * sentence (it names the permission; any key in it masked), and how to fix it. Not transient:
 * the event's retries succeed only once the owner gives the key that permission.
 */
export class StripePermissionMissingError extends Error {
  constructor(error: unknown, what: string) {
    const detail = scrubSecrets(error instanceof Error ? error.message : String(error));
    super(
      `Stripe refused the API key a permission, so ${what} could not be looked up (Stripe said: ${detail}). ` +
        'In Stripe, edit the restricted key and give it Read on what Stripe names; the event is retried a few times, then applied with the decline code unknown',
    );
    this.name = 'StripePermissionMissingError';
  }
}

/**
 * The read permissions the service needs (processor.md, "Connecting"), each with the cheapest
 * call that needs it: one item of a list. Named as an owner finds them in Stripe.
 */
const READ_PERMISSIONS: ReadonlyArray<{ name: string; call: (stripe: Stripe) => Promise<unknown> }> = [
  { name: 'Subscriptions', call: (stripe) => stripe.subscriptions.list({ limit: 1, status: 'all' }) },
  { name: 'Invoices', call: (stripe) => stripe.invoices.list({ limit: 1 }) },
  { name: 'Invoice payments', call: (stripe) => stripe.invoicePayments.list({ limit: 1 }) },
  { name: 'Payment intents', call: (stripe) => stripe.paymentIntents.list({ limit: 1 }) },
  { name: 'Events', call: (stripe) => stripe.events.list({ limit: 1 }) },
];

/** How a key fared: answered with every permission, refused (401), or answered without some (their names). */
export type KeyVerdict = 'accepted' | 'rejected' | { missing: string[] };

/**
 * Tries a key: first one customer (the key's verdict: `rejected` on 401; Stripe unreachable is
 * thrown, it is not a verdict), then each other read permission the service needs, with one
 * item of each list, together. A 403 is a permission the key lacks, named in `missing`
 * (Customers too, when the first call was refused it); anything else that fails is thrown.
 */
export async function checkStripeKey(apiKey: string, apiBase: string): Promise<KeyVerdict> {
  const stripe = await createStripeClient(apiKey, apiBase);
  const missing: string[] = [];
  try {
    await stripe.customers.list({ limit: 1 });
  } catch (error) {
    if (isKeyRejected(error)) return 'rejected';
    if (!isPermissionDenied(error)) throw error;
    missing.push('Customers');
  }
  const answers = await Promise.allSettled(READ_PERMISSIONS.map((permission) => permission.call(stripe)));
  for (const [index, answer] of answers.entries()) {
    if (answer.status === 'fulfilled') continue;
    if (isKeyRejected(answer.reason)) return 'rejected';
    if (!isPermissionDenied(answer.reason)) throw answer.reason;
    missing.push(READ_PERMISSIONS[index]!.name);
  }
  return missing.length === 0 ? 'accepted' : { missing };
}
