import type { DeclineCategory } from './enums.js';

/**
 * The one table that maps a processor decline code to its category (decisions.md).
 * Codes are Stripe's decline codes; anything not listed is `unknown`.
 */
const CODES_BY_CATEGORY: Record<Exclude<DeclineCategory, 'unknown'>, readonly string[]> = {
  soft: [
    'insufficient_funds',
    'card_velocity_exceeded',
    'withdrawal_count_limit_exceeded',
    'generic_decline',
    'do_not_honor',
    'try_again_later',
    'issuer_not_available',
    'processing_error',
    'reenter_transaction',
    'approve_with_id',
  ],
  card_update_required: [
    'expired_card',
    'incorrect_number',
    'invalid_number',
    'incorrect_cvc',
    'invalid_cvc',
    'invalid_expiry_month',
    'invalid_expiry_year',
    'incorrect_zip',
    'card_not_supported',
    'currency_not_supported',
    'invalid_account',
    'new_account_information_available',
    'restricted_card',
    'transaction_not_allowed',
    'do_not_try_again',
    'pin_try_exceeded',
  ],
  authentication_required: ['authentication_required'],
  revoked: ['revocation_of_authorization', 'revocation_of_all_authorizations', 'stop_payment_order'],
  fraud: [
    'fraudulent',
    'lost_card',
    'stolen_card',
    'pickup_card',
    'merchant_blacklist',
    'security_violation',
    'highest_risk_level',
  ],
};

const CATEGORY_BY_CODE: ReadonlyMap<string, DeclineCategory> = new Map(
  Object.entries(CODES_BY_CATEGORY).flatMap(([category, codes]) =>
    codes.map((code) => [code, category as DeclineCategory] as const),
  ),
);

/** Decline codes are matched exactly: processors send them in lowercase snake_case. */
export function declineCategoryOf(declineCode: string): DeclineCategory {
  return CATEGORY_BY_CODE.get(declineCode) ?? 'unknown';
}
