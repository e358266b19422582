import { beforeAll, describe, expect, it } from '@jest/globals';
import { compileValidator, StatsSchema } from '@retention/core';
import { setFxRate, updateWorkspace } from '@retention/domain';
import { useApi, workspaceWithToken } from './harness.js';

const api = useApi();
const validStats = compileValidator(StatsSchema);

beforeAll(async () => {
  // Round rates, so the expected figures below can be worked out by hand.
  for (const [currency, perUsd] of [
    ['eur', '0.8'],
    ['jpy', '100'],
    ['gbp', '0.5'],
  ]) {
    await setFxRate(api.current.db, { currency: currency!, per_usd: perUsd! });
  }
});

const customers = [{ key: 'c', subscriptions: [{ key: 's' }] }];

describe('GET /api/v1/stats', () => {
  it('matches the figures computed by hand for a mixed-currency workspace', async () => {
    const { token } = await workspaceWithToken(api.current, {
      customers,
      campaigns: [
        {
          customer: 'c',
          currency: 'usd',
          amount_cents: 1000,
          decline_code: 'insufficient_funds',
          status: 'recovered',
          recovered_via: 'retry',
          first_failed_at: '2026-01-01T00:00:00Z',
          recovered_at: '2026-01-02T00:00:00Z',
        },
        {
          customer: 'c',
          currency: 'usd',
          amount_cents: 2000,
          decline_code: 'expired_card',
          status: 'recovered',
          recovered_via: 'customer_update',
          first_failed_at: '2026-01-01T00:00:00Z',
          recovered_at: '2026-01-01T12:30:00Z',
        },
        {
          customer: 'c',
          currency: 'eur',
          amount_cents: 800,
          decline_code: 'generic_decline',
          status: 'recovered',
          recovered_via: 'manual',
          first_failed_at: '2026-01-01T00:00:00Z',
          recovered_at: '2026-01-03T00:00:00Z',
        },
        { customer: 'c', currency: 'jpy', amount_cents: 5000, decline_code: 'stolen_card', status: 'in_flight' },
        { customer: 'c', currency: 'usd', amount_cents: 3000, decline_code: 'do_not_honor', status: 'lost' },
        { customer: 'c', currency: 'gbp', amount_cents: 500, decline_code: 'weird_code', status: 'abandoned' },
        { customer: 'c', currency: 'xyz', amount_cents: 999, decline_code: 'stop_payment_order', status: 'lost' },
      ],
      cancel_sessions: [
        { customer: 'c', outcome: 'saved_discount', monthly_mrr_cents: 1000, currency: 'usd' },
        { customer: 'c', outcome: 'saved_pause', monthly_mrr_cents: 800, currency: 'eur' },
        { customer: 'c', outcome: 'saved_downgrade', monthly_mrr_cents: 2000, currency: 'jpy' },
        { customer: 'c', outcome: 'canceled', monthly_mrr_cents: 5000, currency: 'usd' },
        { customer: 'c', outcome: 'canceled', monthly_mrr_cents: 100, currency: 'usd' },
        { customer: 'c', outcome: 'abandoned', monthly_mrr_cents: 50, currency: 'gbp' },
      ],
    });
    const body = await api.current.client(token).stats.retrieve();
    expect(api.current.lastResponse().status).toBe(200);
    expect(validStats(body)).toBeNull();
    expect(body).toEqual({
      object: 'stats',
      display_currency: 'usd',
      has_multiple_currencies: true,
      unconverted_currencies: ['xyz'],
      recovery: {
        opened: 7,
        in_flight: 1,
        recovered: 3,
        lost: 2,
        abandoned: 1,
        recovery_rate: 0.5, // 3 / (3 + 2 + 1)
        gross_recovery_rate: 0.4286, // 3 / 7
        recovered_amount_cents: 4000, // $10 + $20 + €8 (= $10)
        at_risk_amount_cents: 5000, // ¥5,000 = $50
        lost_amount_cents: 4000, // $30 lost + £5 (= $10) abandoned; the xyz amount cannot be converted
        recovered_via: { retry: 1, customer_update: 1, spontaneous: 0, manual: 1 },
        by_decline_category: {
          soft: { opened: 3, recovered: 2 },
          card_update_required: { opened: 1, recovered: 1 },
          authentication_required: { opened: 0, recovered: 0 },
          revoked: { opened: 1, recovered: 0 },
          fraud: { opened: 1, recovered: 0 },
          unknown: { opened: 1, recovered: 0 },
        },
        median_days_to_recover: 1, // hours 12, 24, 48: the median is 24 h
      },
      cancel_flow: {
        sessions: 6,
        saved: 3,
        canceled: 2,
        abandoned: 1,
        save_rate: 0.6, // 3 / (3 + 2)
        by_outcome: {
          saved_discount: 1,
          saved_pause: 1,
          saved_downgrade: 1,
          saved_other: 0,
          canceled: 2,
          abandoned: 1,
        },
        saved_mrr_cents: 4000, // $10 + €8 (= $10) + ¥2,000 (= $20)
      },
      generated_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
    });
  });

  it('normalises to the workspace display currency, exponent-aware', async () => {
    const { token, workspaceId } = await workspaceWithToken(api.current, {
      customers,
      campaigns: [
        { customer: 'c', currency: 'usd', amount_cents: 3000, status: 'recovered' },
        { customer: 'c', currency: 'eur', amount_cents: 800, status: 'recovered' },
        { customer: 'c', currency: 'jpy', amount_cents: 1234, status: 'recovered' },
      ],
    });
    await updateWorkspace(api.current.db, workspaceId, { display_currency: 'jpy' });
    const body = await api.current.client(token).stats.retrieve();
    expect(body.display_currency).toBe('jpy');
    // $30 = ¥3,000; €8 = $10 = ¥1,000; plus ¥1,234.
    expect(body.recovery.recovered_amount_cents).toBe(5234);
  });

  it('takes the median of an even count as the mean of the middle two', async () => {
    const { token } = await workspaceWithToken(api.current, {
      customers,
      campaigns: [
        {
          customer: 'c',
          status: 'recovered',
          first_failed_at: '2026-01-01T00:00:00Z',
          recovered_at: '2026-01-01T10:59:59Z',
        },
        {
          customer: 'c',
          status: 'recovered',
          first_failed_at: '2026-01-01T00:00:00Z',
          recovered_at: '2026-01-01T20:00:00Z',
        },
      ],
    });
    // (10:59:59 + 20:00:00) / 2 = 15:29:59.5 = 0.64583 days, rounded to 0.65.
    expect((await api.current.client(token).stats.retrieve()).recovery.median_days_to_recover).toBe(0.65);
  });

  it('takes the exact median, not one cut to whole hours, and rounds it half up', async () => {
    const recovered = (after: string) => ({
      customer: 'c',
      status: 'recovered' as const,
      first_failed_at: '2026-01-01T00:00:00Z',
      recovered_at: `2026-01-${after}Z`,
    });
    const medianOf = async (afters: string[]) => {
      const { token } = await workspaceWithToken(api.current, { customers, campaigns: afters.map(recovered) });
      return (await api.current.client(token).stats.retrieve()).recovery.median_days_to_recover;
    };
    // One hour holds all three; the middle one is 5:30 = 0.229 days (whole hours would say 5 h = 0.21).
    expect(await medianOf(['01T05:10:00', '01T05:50:00', '01T05:30:00'])).toBe(0.23);
    // 2 days 11:59 = 2.4993 days (whole hours would say 59 h = 2.46).
    expect(await medianOf(['03T11:59:00'])).toBe(2.5);
    // 24:07:12 is exactly 1.005 days: half up gives 1.01, where floating point gives 1.
    expect(await medianOf(['02T00:07:12'])).toBe(1.01);
  });

  it('answers money sums beyond 2^53 instead of failing', async () => {
    const { token, workspaceId, ids } = await workspaceWithToken(api.current, { customers });
    const largest = Number.MAX_SAFE_INTEGER; // 2^53 - 1: two of them sum past what a double holds exactly
    const owner = { workspace_id: workspaceId, customer_id: ids.customers.c!, currency: 'usd' };
    const recoveredAt = new Date('2026-01-02T00:00:00Z');
    await api.current.db('recovery_campaigns').insert(
      [1, 2].map((n) => ({
        ...owner,
        subscription_id: ids.subscriptions.s!,
        psp_invoice_id: `in_huge_${n}`,
        amount_cents: largest,
        status: 'recovered',
        decline_code: 'insufficient_funds',
        decline_category: 'soft',
        recovered_via: 'retry',
        first_failed_at: new Date('2026-01-01T00:00:00Z'),
        recovered_at: recoveredAt,
        closed_at: recoveredAt,
      })),
    );
    await api.current
      .db('cancel_sessions')
      .insert(
        [1, 2].map(() => ({ ...owner, outcome: 'saved_pause', reason_code: 'other', monthly_mrr_cents: largest })),
      );

    const { status, body } = await api.current.get('/api/v1/stats', token);
    expect(status).toBe(200);
    // 2^54 - 2 is even, so a double holds it exactly and JSON carries every digit.
    expect(body.recovery).toMatchObject({ recovered: 2, recovered_amount_cents: 18014398509481982 });
    expect(body.cancel_flow).toMatchObject({ saved: 2, saved_mrr_cents: 18014398509481982 });
  });

  it('has zero counts, null rates and a null median for an empty workspace', async () => {
    const { token } = await workspaceWithToken(api.current);
    const body = await api.current.client(token).stats.retrieve();
    expect(validStats(body)).toBeNull();
    expect(body).toMatchObject({
      has_multiple_currencies: false,
      unconverted_currencies: [],
      recovery: {
        opened: 0,
        recovery_rate: null,
        gross_recovery_rate: null,
        median_days_to_recover: null,
        recovered_amount_cents: 0,
      },
      cancel_flow: { sessions: 0, save_rate: null, saved_mrr_cents: 0 },
    });
  });

  it('stays equal to a count over the rows as campaigns change', async () => {
    const { token, workspaceId } = await workspaceWithToken(api.current, {
      customers,
      campaigns: Array.from({ length: 30 }, () => ({ customer: 'c' })),
    });
    const campaignIds: string[] = await api.current
      .db('recovery_campaigns')
      .where({ workspace_id: workspaceId })
      .pluck('id');
    await api.current
      .db('recovery_campaigns')
      .whereIn('id', campaignIds.slice(0, 10))
      .update({ status: 'lost', closed_at: api.current.db.fn.now() });
    await api.current.db('recovery_campaigns').whereIn('id', campaignIds.slice(10, 15)).update({
      status: 'recovered',
      recovered_via: 'spontaneous',
      recovered_at: api.current.db.fn.now(),
      closed_at: api.current.db.fn.now(),
    });
    const body = await api.current.client(token).stats.retrieve();
    const counts = await api.current
      .db('recovery_campaigns')
      .where({ workspace_id: workspaceId })
      .groupBy('status')
      .select('status')
      .count('* as n');
    const byStatus = Object.fromEntries(counts.map((row) => [row.status, Number(row.n)]));
    expect(byStatus).toEqual({ in_flight: 15, lost: 10, recovered: 5 });
    expect(body.recovery).toMatchObject({ opened: 30, in_flight: 15, lost: 10, recovered: 5 });
    expect(body.recovery.recovered_via.spontaneous).toBe(byStatus.recovered);
  });
});
