import { describe, expect, it } from '@jest/globals';
import { computeOverview, computeStats, parseOverviewPeriod, type Db } from '@retention/db';
import { loadFixtures, loseCampaign, openCampaign, recoverCampaign } from '@retention/domain';
import { actionGraph } from './helpers.js';
import { useTestDatabase, testSecretsKeyBytes } from '@retention/testkit';

const database = useTestDatabase();
const NOW = new Date('2026-06-15T12:00:00.000Z'); // last_30_days starts 2026-05-17
const DAY = 86_400_000;

async function emptyWorkspace(db: Db) {
  const result = await loadFixtures(db, testSecretsKeyBytes(), {
    workspaces: [{ key: 'w', customers: [{ key: 'c', subscriptions: [{ key: 's' }] }] }],
  });
  const ids = result.workspaces.w!;
  return { workspace_id: ids.id, customer_id: ids.customers.c!, subscription_id: ids.subscriptions.s! };
}
type Owner = Awaited<ReturnType<typeof emptyWorkspace>>;

let invoice = 0;
function campaign(
  owner: Owner,
  fields: {
    amount: number;
    currency: string;
    status: string;
    failedAt: string;
    via?: string;
    recoveredAfterDays?: number;
  },
) {
  invoice += 1;
  const failedAt = new Date(fields.failedAt);
  const recoveredAt =
    fields.recoveredAfterDays === undefined ? null : new Date(failedAt.getTime() + fields.recoveredAfterDays * DAY);
  return {
    ...owner,
    psp_invoice_id: `in_overview_${invoice}`,
    amount_cents: fields.amount,
    currency: fields.currency,
    status: fields.status,
    decline_code: 'insufficient_funds',
    decline_category: 'soft',
    recovered_via: fields.via ?? null,
    first_failed_at: failedAt,
    recovered_at: recoveredAt,
    closed_at: fields.status === 'in_flight' ? null : (recoveredAt ?? failedAt),
  };
}

function session(owner: Owner, outcome: string, reason: string, mrr: number, currency: string, createdAt: string) {
  const at = new Date(createdAt);
  return {
    workspace_id: owner.workspace_id,
    customer_id: owner.customer_id,
    subscription_id: owner.subscription_id,
    outcome,
    reason_code: reason,
    monthly_mrr_cents: mrr,
    currency,
    created_at: at,
    ended_at: at,
  };
}

/**
 * Rates chosen so every conversion is exact by hand: 1 usd = 0.5 eur = 100 jpy = 0.25 kwd,
 * and `xyz` has no rate at all.
 */
async function seed(db: Db): Promise<Owner> {
  await db('fx_rates')
    .insert([
      { currency: 'eur', per_usd: '0.5' },
      { currency: 'jpy', per_usd: '100' },
      { currency: 'kwd', per_usd: '0.25' },
    ])
    .onConflict('currency')
    .merge();
  const owner = await emptyWorkspace(db);
  await db('recovery_campaigns').insert([
    // In the last 30 days:
    campaign(owner, {
      amount: 1000,
      currency: 'usd',
      status: 'recovered',
      via: 'retry',
      failedAt: '2026-06-10T00:00:00Z',
      recoveredAfterDays: 2,
    }),
    campaign(owner, {
      amount: 1000,
      currency: 'eur',
      status: 'recovered',
      via: 'manual',
      failedAt: '2026-05-17T00:00:00Z',
      recoveredAfterDays: 4,
    }),
    campaign(owner, { amount: 1000, currency: 'jpy', status: 'in_flight', failedAt: '2026-06-01T00:00:00Z' }),
    campaign(owner, { amount: 1000, currency: 'kwd', status: 'lost', failedAt: '2026-06-02T00:00:00Z' }),
    campaign(owner, {
      amount: 500,
      currency: 'xyz',
      status: 'recovered',
      via: 'retry',
      failedAt: '2026-06-03T00:00:00Z',
      recoveredAfterDays: 1,
    }),
    // One millisecond before the period:
    campaign(owner, {
      amount: 3000,
      currency: 'usd',
      status: 'recovered',
      via: 'customer_update',
      failedAt: '2026-05-16T23:59:59.999Z',
      recoveredAfterDays: 10,
    }),
    campaign(owner, { amount: 700, currency: 'usd', status: 'abandoned', failedAt: '2026-01-05T00:00:00Z' }),
  ]);
  await db('cancel_sessions').insert([
    session(owner, 'saved_discount', 'too_expensive', 1000, 'eur', '2026-06-05T00:00:00Z'),
    session(owner, 'canceled', 'other', 500, 'usd', '2026-06-06T00:00:00Z'),
    session(owner, 'saved_pause', 'too_expensive', 300, 'usd', '2026-03-01T00:00:00Z'),
  ]);
  return owner;
}

describe('computeOverview', () => {
  it('answers the last 30 days as computed by hand, in usd, naming the unconvertible currency', async () => {
    const { db } = database.current;
    const owner = await seed(db);
    const { stats, unconverted_currencies, since } = await computeOverview(db, owner.workspace_id, 'last_30_days', NOW);
    expect(since).toBe('2026-05-17');
    expect(unconverted_currencies).toEqual(['xyz']);
    expect(stats.unconverted_currencies).toEqual(['xyz']);
    expect(stats.recovery).toMatchObject({
      opened: 5,
      in_flight: 1,
      recovered: 3,
      lost: 1,
      abandoned: 0,
      recovery_rate: 0.75,
      gross_recovery_rate: 0.6,
      recovered_amount_cents: 3000, // 1000 usd + 1000 eur cents (= 2000 usd cents); xyz left out
      at_risk_amount_cents: 1000, // 1000 jpy
      lost_amount_cents: 400, // 1.000 kwd
      recovered_via: { retry: 2, customer_update: 0, spontaneous: 0, manual: 1 },
      median_days_to_recover: 2, // of 1, 2 and 4 days
    });
    expect(stats.cancel_flow).toMatchObject({
      sessions: 2,
      saved: 1,
      canceled: 1,
      save_rate: 0.5,
      saved_mrr_cents: 2000,
    });
  });

  it('answers all time as GET /api/v1/stats does, number for number', async () => {
    const { db } = database.current;
    const owner = await seed(db);
    const overview = await computeOverview(db, owner.workspace_id, 'all_time', NOW);
    expect(overview.stats).toEqual(await computeStats(db, owner.workspace_id, NOW));
    expect(overview.stats.recovery).toMatchObject({
      opened: 7,
      recovered: 4,
      abandoned: 1,
      recovery_rate: 0.6667,
      recovered_amount_cents: 6000,
      lost_amount_cents: 1100,
      median_days_to_recover: 3, // of 1, 2, 4 and 10 days
    });
    expect(overview.stats.cancel_flow).toMatchObject({
      sessions: 3,
      saved: 2,
      save_rate: 0.6667,
      saved_mrr_cents: 2300,
    });
    expect(overview.cancel_reasons).toEqual([
      { reason_code: 'too_expensive', sessions: 2 },
      { reason_code: 'other', sessions: 1 },
    ]);
  });

  it('gives the twelve months of charts, oldest first, in the display currency', async () => {
    const { db } = database.current;
    const owner = await seed(db);
    const overview = await computeOverview(db, owner.workspace_id, 'last_90_days', NOW);
    expect(overview.campaigns_by_month.map((month) => month.month)).toEqual([
      '2025-07',
      '2025-08',
      '2025-09',
      '2025-10',
      '2025-11',
      '2025-12',
      '2026-01',
      '2026-02',
      '2026-03',
      '2026-04',
      '2026-05',
      '2026-06',
    ]);
    const byMonth = Object.fromEntries(overview.campaigns_by_month.map((month) => [month.month, month]));
    expect(byMonth['2026-06']).toEqual({
      month: '2026-06',
      opened: 4,
      recovered: 2,
      failed_amount_cents: 2400,
      recovered_amount_cents: 1000,
      closed: 3,
      recovery_rate: 0.6667,
    });
    expect(byMonth['2026-05']).toEqual({
      month: '2026-05',
      opened: 2,
      recovered: 2,
      failed_amount_cents: 5000,
      recovered_amount_cents: 5000,
      closed: 2,
      recovery_rate: 1,
    });
    expect(byMonth['2026-01']).toMatchObject({ opened: 1, failed_amount_cents: 700, recovery_rate: 0 });
    expect(byMonth['2026-02']).toMatchObject({ opened: 0, failed_amount_cents: 0, recovery_rate: null });
    const sessions = Object.fromEntries(
      overview.cancel_sessions_by_month.map((month) => [month.month, month.by_outcome]),
    );
    expect(sessions['2026-06']).toMatchObject({ saved_discount: 1, canceled: 1 });
    expect(sessions['2026-03']).toMatchObject({ saved_pause: 1 });
  });

  it('stays exact as campaigns change: periods agree with a recount of the source rows', async () => {
    const { db } = database.current;
    const owner = await seed(db);
    // Move one campaign out of the period, close another, delete a third.
    await db('recovery_campaigns')
      .where({ currency: 'jpy', workspace_id: owner.workspace_id })
      .update({ first_failed_at: new Date('2026-04-01T00:00:00Z') });
    await db('recovery_campaigns')
      .where({ currency: 'kwd', workspace_id: owner.workspace_id })
      .update({
        status: 'recovered',
        recovered_via: 'spontaneous',
        recovered_at: new Date('2026-06-09T00:00:00Z'),
        closed_at: new Date('2026-06-09T00:00:00Z'),
      });
    await db('recovery_campaigns').where({ currency: 'xyz', workspace_id: owner.workspace_id }).delete();
    const { stats } = await computeOverview(db, owner.workspace_id, 'last_30_days', NOW);
    expect(stats.unconverted_currencies).toEqual([]);
    expect(stats.recovery).toMatchObject({
      opened: 3,
      in_flight: 0,
      recovered: 3,
      lost: 0,
      recovered_amount_cents: 3400,
      at_risk_amount_cents: 0,
      median_days_to_recover: 4, // of 2, 4 and 7 days
    });
    const { rows } = await db.raw<{ rows: Array<{ total: number; recovered: number }> }>(
      `SELECT count(*)::integer AS total, count(*) FILTER (WHERE status = 'recovered')::integer AS recovered
         FROM recovery_campaigns WHERE workspace_id = ? AND first_failed_at >= '2026-05-17T00:00:00Z'`,
      [owner.workspace_id],
    );
    expect([stats.recovery.opened, stats.recovery.recovered]).toEqual([rows[0]!.total, rows[0]!.recovered]);
  });

  it('refuses an unknown period with the documented error', () => {
    expect(() => parseOverviewPeriod('last_week')).toThrow(/period must be one of/);
    expect(parseOverviewPeriod(undefined)).toBe('last_30_days');
  });
});

describe('the day rollups under concurrent writers', () => {
  it('stay exact while campaigns open and close at once, across days and currencies', async () => {
    const { db } = database.current;
    const g = await actionGraph(db);
    const now = new Date();
    const currencies = ['usd', 'eur', 'jpy', 'xyz'];
    const opened = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        openCampaign(db, {
          workspace_id: g.a.id,
          customer_id: g.a.ann,
          subscription_id: g.a.active,
          psp_invoice_id: `in_concurrent_${i}`,
          amount_cents: 100 + i,
          currency: currencies[i % 4]!,
          decline_code: i % 3 === 0 ? 'expired_card' : 'insufficient_funds',
          failed_at: new Date(now.getTime() - (i % 12) * DAY - 1000),
        }),
      ),
    );
    await Promise.all(
      opened.map((campaign, i) =>
        i % 3 === 0
          ? recoverCampaign(db, { id: campaign.id, via: 'retry' })
          : i % 3 === 1
            ? loseCampaign(db, { id: campaign.id, by: 'processor' })
            : Promise.resolve(campaign),
      ),
    );
    const { stats } = await computeOverview(db, g.a.id, 'last_30_days', now);
    const { rows } = await db.raw<{
      rows: Array<{ status: string; currency: string; campaigns: number; amount: string }>;
    }>(
      `SELECT status, currency, count(*)::integer AS campaigns, sum(amount_cents)::text AS amount
         FROM recovery_campaigns WHERE workspace_id = ? GROUP BY 1, 2`,
      [g.a.id],
    );
    const count = (status: string) =>
      rows.filter((row) => row.status === status).reduce((n, row) => n + row.campaigns, 0);
    expect(stats.recovery).toMatchObject({
      opened: 40,
      recovered: count('recovered'),
      lost: count('lost'),
      in_flight: count('in_flight'),
    });
    expect(count('recovered')).toBe(14);
    const { rows: kept } = await db.raw<{
      rows: Array<{ status: string; currency: string; campaigns: number; amount: string }>;
    }>(
      `SELECT status, currency, sum(campaigns)::integer AS campaigns, sum(amount_cents)::text AS amount
         FROM campaign_day_rollups WHERE workspace_id = ? GROUP BY 1, 2 HAVING sum(campaigns) <> 0`,
      [g.a.id],
    );
    const key = (row: { status: string; currency: string }) => `${row.status}/${row.currency}`;
    expect([...kept].sort((a, b) => key(a).localeCompare(key(b)))).toEqual(
      [...rows].sort((a, b) => key(a).localeCompare(key(b))),
    );
    expect(stats.unconverted_currencies).toEqual(['xyz']);
  });
});
