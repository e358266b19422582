/**
 * A processor connection's mode and why an event was set aside (docs/processor.md, "Mode" and
 * "Set aside"), for the server, which refuses a key of the other mode, and for the Processor
 * page, which asks before sending one: both read a key's mode by this one rule. A subpath of its
 * own, so the dashboard takes these few lines without the rest of the package.
 */

/** Stripe keeps test and live data apart; a workspace mirrors one of them. */
export type ProcessorMode = 'test' | 'live';

/** The mode of a restricted (or secret) key, from its prefix: `rk_live_`/`sk_live_` or `rk_test_`/`sk_test_`. */
export function modeOfKey(apiKey: string): ProcessorMode {
  return /^[rs]k_live_/.test(apiKey) ? 'live' : 'test';
}

/**
 * Why an event was stored, answered 2xx and not applied (`processor_events.ignored_reason`):
 *   connected_account - about an account connected to this one (Stripe Connect: it has `account`)
 *   other_mode        - its `livemode` is not the connection's mode
 *   signup_payment    - the failed first payment of a signup (`billing_reason: subscription_create`),
 *                       which Stripe does not retry and which opens no recovery campaign
 */
export const SET_ASIDE_REASONS = ['connected_account', 'other_mode', 'signup_payment'] as const;
export type SetAsideReason = (typeof SET_ASIDE_REASONS)[number];
