import { minorUnitExponent } from '@retention/core';

/**
 * Stripe's API counts amounts in its own minor units, which are ISO 4217's (ours: packages/core
 * money.ts) but for two currencies (https://docs.stripe.com/currencies, "Zero-decimal" and
 * "Special cases"): ISK, zero-decimal in ISO, stays two-decimal in Stripe's API (100 is one
 * króna, and amounts are whole krónur, divisible by 100); MGA is zero-decimal in Stripe's API
 * and two-decimal in ISO. HUF and TWD, which Stripe pays out in whole units, are two-decimal in
 * its API, as in ISO. Every Stripe amount is brought to ours here, once, as it comes in:
 * without this an ISK invoice of 5,000 kr (Stripe's 500000) would be a campaign of 500,000 kr.
 */
const STRIPE_API_EXPONENT: Readonly<Record<string, number>> = { isk: 2, mga: 0 };

/** A Stripe amount of `currency` (lowercase) in our minor units; a fraction left by ISK rounds half up. */
export function fromStripeAmount(amount: number, currency: string): number {
  const shift = minorUnitExponent(currency) - (STRIPE_API_EXPONENT[currency] ?? minorUnitExponent(currency));
  if (shift >= 0) return amount * 10 ** shift;
  return Math.round(amount / 10 ** -shift);
}
