import { invalidParam, ServiceError } from '@retention/core';
import { isObject, type StripeObject } from './objects.js';
import { loadStripe } from './library.js';
import type { StripeEventEnvelope } from './normalise.js';

/** Stripe's own tolerance for the signature's timestamp, either way. */
export const SIGNATURE_TOLERANCE_SECONDS = 300;

/**
 * How deep an event may nest objects and arrays, the event itself level 1 (`data` 2,
 * `data.object` 3). Stripe's deepest, an invoice with its lines, prices and expanded objects,
 * is under 20; 64 leaves room for any that Stripe adds. Deeper is not an event: Postgres's JSON
 * parser runs out of stack somewhere past 10,000 levels (a 40 KB body), and nothing of ours
 * should read such a thing.
 */
const MAX_EVENT_DEPTH = 64;

/**
 * A refusal of the signature itself: it does not verify under the connection's signing secret,
 * or its timestamp is out of tolerance. What a mistyped or outdated secret causes, so the
 * receiver counts these per connection (docs/processor.md, "Refused deliveries"); a missing
 * header or a body that is not an event is not Stripe's doing and is not counted.
 */
export class StripeSignatureRefused extends ServiceError {
  constructor(message: string) {
    super('invalid_param', message);
  }
}

/**
 * Verifies `Stripe-Signature` over the raw bytes with the official library, then checks the
 * body is an event. Every refusal is `invalid_param` (400) with a reason that gives nothing
 * away beyond what a Stripe-style verifier says.
 */
export async function verifyStripeEvent(
  rawBody: Buffer,
  signatureHeader: string | undefined,
  secret: string,
): Promise<StripeEventEnvelope> {
  if (!signatureHeader) throw invalidParam('The Stripe-Signature header is missing.');
  const Stripe = await loadStripe();
  let parsed: unknown;
  try {
    parsed = Stripe.webhooks.constructEvent(rawBody, signatureHeader, secret, SIGNATURE_TOLERANCE_SECONDS);
  } catch (error) {
    if (error instanceof Stripe.errors.StripeSignatureVerificationError) {
      throw new StripeSignatureRefused(
        'The Stripe-Signature header does not verify: the signing secret is not this endpoint’s, the body was changed, or the timestamp is more than 300 s away.',
      );
    }
    // Signed, but not JSON.
    throw invalidParam('The body is not a Stripe event.');
  }
  // The library refuses old timestamps only; one from the future is as much a replay risk.
  const timestamp = Number(/(?:^|,)\s*t=(\d+)/.exec(signatureHeader)?.[1]);
  if (!(timestamp <= Math.floor(Date.now() / 1000) + SIGNATURE_TOLERANCE_SECONDS)) {
    throw new StripeSignatureRefused('The Stripe-Signature timestamp is more than 300 s ahead of this server’s clock.');
  }
  const event = assertEvent(parsed);
  if (nestsDeeperThan(event, MAX_EVENT_DEPTH)) {
    throw invalidParam(
      `The body is not a Stripe event: it nests objects and arrays more than ${MAX_EVENT_DEPTH} levels deep.`,
    );
  }
  return event;
}

/**
 * Whether `root` holds objects or arrays deeper than `limit` levels (itself level 1). A walk
 * with a stack of its own, not recursion, so no depth a 1 MB body can reach overflows
 * JavaScript's stack; it stops at the first container past the limit.
 */
function nestsDeeperThan(root: object, limit: number): boolean {
  const pending: Array<{ value: object; depth: number }> = [{ value: root, depth: 1 }];
  for (let next = pending.pop(); next; next = pending.pop()) {
    if (next.depth > limit) return true;
    for (const child of Object.values(next.value) as unknown[]) {
      if (typeof child === 'object' && child !== null) pending.push({ value: child, depth: next.depth + 1 });
    }
  }
  return false;
}

function assertEvent(value: unknown): StripeEventEnvelope {
  const event = value as StripeObject;
  if (
    !isObject(event) ||
    event.object !== 'event' ||
    typeof event.id !== 'string' ||
    !/^evt_[A-Za-z0-9_]{1,250}$/.test(event.id) ||
    typeof event.type !== 'string' ||
    !/^[a-z0-9_.]{1,200}$/.test(event.type) ||
    typeof event.created !== 'number' ||
    !Number.isSafeInteger(event.created) ||
    event.created < 0 ||
    !isObject(event.data) ||
    !isObject(event.data.object)
  ) {
    throw invalidParam('The body is not a Stripe event (object "event" with id, type, created and data.object).');
  }
  return event as unknown as StripeEventEnvelope;
}

/** An event as stored (it was verified when received). */
export function storedStripeEvent(payload: unknown): StripeEventEnvelope {
  return assertEvent(payload);
}
