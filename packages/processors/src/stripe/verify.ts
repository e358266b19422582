import Stripe from 'stripe';
import { invalidParam } from '@retention/core';
import { isObject, type StripeObject } from './objects.js';
import type { StripeEventEnvelope } from './normalise.js';

/** Stripe's own tolerance for the signature's timestamp, either way. */
export const SIGNATURE_TOLERANCE_SECONDS = 300;

/**
 * Verifies `Stripe-Signature` over the raw bytes with the official library, then checks the
 * body is an event. Every refusal is `invalid_param` (400) with a reason that gives nothing
 * away beyond what a Stripe-style verifier says.
 */
export function verifyStripeEvent(
  rawBody: Buffer,
  signatureHeader: string | undefined,
  secret: string,
): StripeEventEnvelope {
  if (!signatureHeader) throw invalidParam('The Stripe-Signature header is missing.');
  let parsed: unknown;
  try {
    parsed = Stripe.webhooks.constructEvent(rawBody, signatureHeader, secret, SIGNATURE_TOLERANCE_SECONDS);
  } catch (error) {
    if (error instanceof Stripe.errors.StripeSignatureVerificationError) {
      throw invalidParam(
        'The Stripe-Signature header does not verify: the signing secret is not this endpoint’s, the body was changed, or the timestamp is more than 300 s away.',
      );
    }
    // Signed, but not JSON.
    throw invalidParam('The body is not a Stripe event.');
  }
  // The library refuses old timestamps only; one from the future is as much a replay risk.
  const timestamp = Number(/(?:^|,)\s*t=(\d+)/.exec(signatureHeader)?.[1]);
  if (!(timestamp <= Math.floor(Date.now() / 1000) + SIGNATURE_TOLERANCE_SECONDS)) {
    throw invalidParam('The Stripe-Signature timestamp is more than 300 s ahead of this server’s clock.');
  }
  return assertEvent(parsed);
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
