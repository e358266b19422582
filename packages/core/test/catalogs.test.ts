import { describe, expect, it } from '@jest/globals';
import {
  buildEventData,
  declineCategoryOf,
  ERROR_STATUS,
  EVENT_TYPES,
  eventDataKeys,
  mintApiToken,
  hashApiToken,
  newSigningSecret,
  parseDurationList,
  serializeWebhookPayload,
} from '../src/index.js';

describe('event catalog', () => {
  // Spec 6.2, copied by hand: the catalog must match it exactly.
  const SPEC_DATA_FIELDS: Record<string, string[]> = {
    'recovery.opened': [
      'campaign_id',
      'customer_email',
      'amount_cents',
      'currency',
      'decline_code',
      'decline_category',
      'psp_invoice_id',
    ],
    'recovery.recovered': ['campaign_id', 'customer_email', 'amount_cents', 'currency', 'recovered_via'],
    'recovery.lost': ['campaign_id', 'customer_email', 'amount_cents', 'currency', 'reason', 'source'],
    'cancel.saved': ['session_id', 'outcome', 'reason_code', 'customer_email', 'monthly_mrr_cents', 'currency'],
    'cancel.lost': ['session_id', 'outcome', 'reason_code', 'customer_email', 'monthly_mrr_cents', 'currency'],
    'trial.reminder_sent': ['reminder_id', 'customer_email', 'subscription_id', 'trial_end'],
    'reactivation.sent': ['reactivation_id', 'customer_email', 'subscription_id'],
    'winback.recorded': [
      'winback_id',
      'customer_email',
      'psp_subscription_id',
      'days_away',
      'amount_cents',
      'currency',
    ],
  };

  it('has exactly the eight types of the spec, each with the spec data fields', () => {
    expect([...EVENT_TYPES].sort()).toEqual(Object.keys(SPEC_DATA_FIELDS).sort());
    for (const type of EVENT_TYPES) {
      expect(eventDataKeys(type).sort()).toEqual([...SPEC_DATA_FIELDS[type]!].sort());
    }
  });

  const campaign = {
    campaign_id: '6f1c2a52-9d1e-4a8e-b2c4-1f0e2d3c4b5a',
    customer_email: 'ann@example.com',
    amount_cents: 4900,
    currency: 'usd',
  };

  it('accepts each valid shape of recovery.lost and refuses reason and source together', () => {
    expect(buildEventData('recovery.lost', campaign)).toEqual(campaign);
    expect(buildEventData('recovery.lost', { ...campaign, reason: 'auto_close_stale' })).toBeTruthy();
    expect(buildEventData('recovery.lost', { ...campaign, source: 'dashboard' })).toBeTruthy();
    expect(() =>
      buildEventData('recovery.lost', { ...campaign, reason: 'auto_close_stale', source: 'dashboard' } as never),
    ).toThrow(TypeError);
  });

  it('refuses missing fields, extra fields and wrong JSON types', () => {
    expect(() => buildEventData('recovery.recovered', campaign as never)).toThrow(/recovered_via/);
    expect(() =>
      buildEventData('recovery.recovered', { ...campaign, recovered_via: 'retry', extra: 1 } as never),
    ).toThrow(/extra/);
    expect(() =>
      buildEventData('recovery.recovered', { ...campaign, amount_cents: '4900', recovered_via: 'retry' } as never),
    ).toThrow(/amount_cents/);
    expect(() =>
      buildEventData('cancel.lost', {
        session_id: campaign.campaign_id,
        outcome: 'saved_pause',
        reason_code: 'unused',
        customer_email: 'a@b.co',
        monthly_mrr_cents: 1,
        currency: 'usd',
      } as never),
    ).toThrow(/outcome/);
  });

  it('takes timestamps in event data only as UTC with milliseconds', () => {
    const reminder = {
      reminder_id: campaign.campaign_id,
      customer_email: 'ann@example.com',
      subscription_id: campaign.campaign_id,
      trial_end: '2030-01-02T03:04:05.678Z',
    };
    expect(buildEventData('trial.reminder_sent', reminder)).toEqual(reminder);
    for (const trialEnd of [
      '2030-01-02T03:04:05Z',
      '2030-01-02T03:04:05.6Z',
      '2030-01-02T03:04:05.678+02:00',
      '2030-01-02t03:04:05.678z',
      '2030-01-02',
      '2030-02-30T03:04:05.678Z',
    ]) {
      expect(() => buildEventData('trial.reminder_sent', { ...reminder, trial_end: trialEnd })).toThrow(/trial_end/);
    }
  });

  it('serialises exactly type, created_at and data', () => {
    const body = serializeWebhookPayload('reactivation.sent', '2026-03-07T09:15:02.123Z', { a: 1 });
    expect(Object.keys(JSON.parse(body) as object)).toEqual(['type', 'created_at', 'data']);
  });
});

describe('decline categories', () => {
  // decisions.md, copied by hand: every code of every category.
  const DECISIONS_TABLE: Record<string, string[]> = {
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

  it('files every code of the decisions.md table in its category', () => {
    const codes = Object.entries(DECISIONS_TABLE).flatMap(([category, list]) => list.map((code) => [code, category]));
    expect(codes).toHaveLength(37);
    expect(codes.filter(([code, category]) => declineCategoryOf(code!) !== category)).toEqual([]);
  });

  it.each([['something_new'], ['INSUFFICIENT_FUNDS'], [''], ['constructor'], ['__proto__']])(
    '%j is unknown',
    (code) => {
      expect(declineCategoryOf(code)).toBe('unknown');
    },
  );
});

describe('error catalog', () => {
  it('maps every spec error type to its status', () => {
    expect(ERROR_STATUS).toMatchObject({
      authentication_required: 401,
      invalid_token: 401,
      invalid_param: 400,
      not_found: 404,
      rate_limit_exceeded: 429,
      database_error: 500,
    });
  });
});

describe('secrets', () => {
  it('hashes tokens with SHA-256, as lowercase hex of the UTF-8 bytes', () => {
    // FIPS 180-2's "abc" vector, and a token-shaped value checked with `printf '%s' … | sha256sum`.
    expect(hashApiToken('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(hashApiToken('sk_live_4eC39HqLyjWDarjtT1zdp7dcAbCdEfGh')).toBe(
      '8f2da6597f306e5229256ce3817725f91aa18d3cfbb61d562ca51d99fa1ff1dc',
    );
  });

  it('mints sk_live_ tokens with at least 128 bits of randomness, hashed with SHA-256', () => {
    const minted = mintApiToken();
    expect(minted.token).toMatch(/^sk_live_[0-9A-Za-z]{32}$/);
    expect(32 * Math.log2(62)).toBeGreaterThanOrEqual(128);
    expect(minted.hash).toBe(hashApiToken(minted.token));
    expect(minted.hash).toMatch(/^[0-9a-f]{64}$/);
    expect(minted.hint).toBe(minted.token.slice(-4));
    expect(mintApiToken().token).not.toBe(minted.token);
  });

  it('makes whsec_ signing secrets with at least 192 bits of randomness', () => {
    const secret = newSigningSecret();
    expect(secret).toMatch(/^whsec_[0-9A-Za-z]{43}$/);
    expect(43 * Math.log2(62)).toBeGreaterThanOrEqual(192);
  });
});

describe('durations', () => {
  it('parses retry schedules', () => {
    expect(parseDurationList('1s,1s,2s')).toEqual([1000, 1000, 2000]);
    expect(parseDurationList('500ms')).toEqual([500]);
    expect(parseDurationList('5s,5m,30m,2h,1d')).toEqual([5000, 300000, 1800000, 7200000, 86400000]);
    expect(parseDurationList('5x')).toBeNull();
    expect(parseDurationList('1s,,2s')).toBeNull();
  });
});
