import { describe, expect, it } from '@jest/globals';
import type { Knex } from 'knex';
import { MIGRATIONS, migrateLatest, type Db, type Migration } from '@retention/db';
import { createEmptyDatabase, testSecretsKeyBytes } from '@retention/testkit';

/** Applies the migrations before `name` only, as a database deployed before it would have them. */
async function migrateUpTo(db: Db, name: string): Promise<void> {
  const earlier = MIGRATIONS.slice(
    0,
    MIGRATIONS.findIndex((migration) => migration.name === name),
  );
  const migrationSource: Knex.MigrationSource<Migration> = {
    getMigrations: () => Promise.resolve([...earlier]),
    getMigrationName: (migration) => migration.name,
    getMigration: (migration) => Promise.resolve(migration),
  };
  await db.migrate.latest({ migrationSource, tableName: 'knex_migrations' });
}

/** The day rollups recomputed from the source rows, for comparison with the kept ones. */
/** A workspace with one customer on one subscription, for campaigns to be opened against. */
async function oneSubscriber(
  db: Db,
): Promise<{ workspaceId: string; customer: { id: string }; subscription: { id: string } }> {
  const [workspace] = await db('workspaces').insert({ name: 'W' }).returning<Array<{ id: string }>>('id');
  const workspaceId = workspace!.id;
  const [customer] = await db('customers')
    .insert({ workspace_id: workspaceId, psp_customer_id: 'cus_1', email: 'a@b.co' })
    .returning<Array<{ id: string }>>('id');
  const [subscription] = await db('subscriptions')
    .insert({
      workspace_id: workspaceId,
      customer_id: customer!.id,
      psp_subscription_id: 'sub_1',
      status: 'active',
      plan_name: 'Pro',
      amount_cents: 4900,
      currency: 'usd',
      interval: 'month',
    })
    .returning<Array<{ id: string }>>('id');
  return { workspaceId, customer: customer!, subscription: subscription! };
}

const RECOUNT = `
  SELECT (SELECT json_agg(r ORDER BY r.day, r.status, r.currency, r.recovered_via) FROM (
            SELECT (first_failed_at AT TIME ZONE 'UTC')::date AS day, status, currency, coalesce(recovered_via, '') AS recovered_via,
                   count(*)::bigint AS campaigns, sum(amount_cents)::bigint AS amount_cents
              FROM recovery_campaigns GROUP BY 1, 2, 3, 4) r) AS expected,
         (SELECT json_agg(r ORDER BY r.day, r.status, r.currency, r.recovered_via) FROM (
            SELECT day, status, currency, recovered_via, sum(campaigns)::bigint AS campaigns, sum(amount_cents)::bigint AS amount_cents
              FROM campaign_day_rollups GROUP BY 1, 2, 3, 4 HAVING sum(campaigns) <> 0) r) AS kept,
         (SELECT json_agg(r ORDER BY r.day, r.outcome, r.reason_code) FROM (
            SELECT (created_at AT TIME ZONE 'UTC')::date AS day, outcome, reason_code, count(*)::bigint AS sessions,
                   sum(monthly_mrr_cents)::bigint AS mrr_cents
              FROM cancel_sessions GROUP BY 1, 2, 3) r) AS expected_sessions,
         (SELECT json_agg(r ORDER BY r.day, r.outcome, r.reason_code) FROM (
            SELECT day, outcome, reason_code, sum(sessions)::bigint AS sessions, sum(mrr_cents)::bigint AS mrr_cents
              FROM cancel_session_day_rollups GROUP BY 1, 2, 3 HAVING sum(sessions) <> 0) r) AS kept_sessions`;

describe('0012-insight-rollups', () => {
  it('backfills the rows that existed before it, then keeps the day rollups exact under inserts, updates and deletes', async () => {
    const database = await createEmptyDatabase();
    try {
      const { db } = database;
      await migrateUpTo(db, '0012-insight-rollups');
      const { workspaceId, customer, subscription } = await oneSubscriber(db);
      const owner = { workspace_id: workspaceId, customer_id: customer.id, subscription_id: subscription.id };
      const campaign = (invoice: number, currency: string, failedAt: string) => ({
        ...owner,
        psp_invoice_id: `in_${invoice}`,
        amount_cents: 100 * invoice,
        currency,
        status: 'in_flight',
        decline_code: 'generic_decline',
        decline_category: 'unknown',
        first_failed_at: new Date(failedAt),
      });
      // 23:59:59.999 UTC and 00:00 UTC the next day fall in different day buckets.
      await db('recovery_campaigns').insert([
        campaign(1, 'usd', '2026-03-01T23:59:59.999Z'),
        campaign(2, 'usd', '2026-03-02T00:00:00Z'),
        campaign(3, 'eur', '2026-03-02T12:00:00Z'),
      ]);
      await db('cancel_sessions').insert({
        ...owner,
        outcome: 'canceled',
        reason_code: 'other',
        monthly_mrr_cents: 500,
        currency: 'usd',
        created_at: new Date('2026-03-03T00:00:00Z'),
        ended_at: new Date('2026-03-03T00:00:00Z'),
      });

      await migrateLatest(db, { secretsKey: testSecretsKeyBytes() });
      const check = async () => {
        const { rows } = await db.raw<{ rows: Array<Record<string, unknown>> }>(RECOUNT);
        expect(rows[0]!.kept).toEqual(rows[0]!.expected);
        expect(rows[0]!.kept_sessions).toEqual(rows[0]!.expected_sessions);
        return rows[0]!;
      };
      expect(((await check()).kept as unknown[]).length).toBe(3);

      await db('recovery_campaigns').insert(campaign(4, 'jpy', '2026-04-01T00:00:00Z'));
      await db('recovery_campaigns')
        .where({ psp_invoice_id: 'in_2' })
        .update({
          status: 'recovered',
          recovered_via: 'manual',
          recovered_at: new Date('2026-03-05T00:00:00Z'),
          closed_at: new Date('2026-03-05T00:00:00Z'),
        });
      await db('recovery_campaigns')
        .where({ psp_invoice_id: 'in_3' })
        .update({ first_failed_at: new Date('2026-02-27T00:00:00Z') });
      await db('recovery_campaigns').where({ psp_invoice_id: 'in_1' }).delete();
      await db('cancel_sessions').update({ outcome: 'saved_pause' });
      await check();
      const { rows } = await db.raw<{ rows: Array<{ campaigns: string }> }>(
        'SELECT sum(campaigns)::text AS campaigns FROM recovery_time_day_rollups',
      );
      expect(rows[0]!.campaigns).toBe('1');

      // Deleting the workspace cascades through the triggers without resurrecting its rollups.
      await db('workspaces').where({ id: workspaceId }).delete();
      const { rows: left } = await db.raw<{ rows: Array<{ n: number }> }>(
        `SELECT (SELECT count(*) FROM campaign_day_rollups) + (SELECT count(*) FROM recovery_time_day_rollups)
              + (SELECT count(*) FROM cancel_session_day_rollups) AS n`,
      );
      expect(Number(left[0]!.n)).toBe(0);
    } finally {
      await database.drop();
    }
  });
});

/** The decline-code rollup recomputed from the source rows, beside the kept one. */
const RECOUNT_CODES = `
  SELECT (SELECT coalesce(json_agg(r ORDER BY r.day, r.decline_code, r.status, r.currency), '[]') FROM (
            SELECT (first_failed_at AT TIME ZONE 'UTC')::date AS day, decline_category, decline_code, status, currency,
                   count(*)::bigint AS campaigns, sum(amount_cents)::bigint AS amount_cents
              FROM recovery_campaigns GROUP BY 1, 2, 3, 4, 5) r) AS expected,
         (SELECT coalesce(json_agg(r ORDER BY r.day, r.decline_code, r.status, r.currency), '[]') FROM (
            SELECT day, decline_category, decline_code, status, currency, sum(campaigns)::bigint AS campaigns,
                   sum(amount_cents)::bigint AS amount_cents
              FROM decline_code_day_rollups GROUP BY 1, 2, 3, 4, 5 HAVING sum(campaigns) <> 0) r) AS kept`;

describe('0044-decline-code-rollups', () => {
  it('backfills the campaigns that existed before it, then keeps the rollup exact under inserts, updates and deletes', async () => {
    const database = await createEmptyDatabase();
    try {
      const { db } = database;
      // Everything, then 0044 rolled back alone (nothing after it reads its table): 0019 needs the
      // secrets key, which migrateUpTo does not give.
      const migration = MIGRATIONS.find((one) => one.name === '0044-decline-code-rollups')!;
      await migrateLatest(db, { secretsKey: testSecretsKeyBytes() });
      await migration.down(db);
      const { workspaceId, customer, subscription } = await oneSubscriber(db);
      const campaign = (invoice: number, code: string, category: string, failedAt: string) => ({
        workspace_id: workspaceId,
        customer_id: customer.id,
        subscription_id: subscription.id,
        psp_invoice_id: `in_${invoice}`,
        amount_cents: 100 * invoice,
        currency: invoice % 2 === 0 ? 'eur' : 'usd',
        status: 'in_flight',
        decline_code: code,
        decline_category: category,
        first_failed_at: new Date(failedAt),
      });
      await db('recovery_campaigns').insert([
        campaign(1, 'insufficient_funds', 'soft', '2026-03-01T23:59:59.999Z'),
        campaign(2, 'insufficient_funds', 'soft', '2026-03-02T00:00:00Z'),
        campaign(3, 'expired_card', 'card_update_required', '2026-03-02T12:00:00Z'),
      ]);
      await migration.up(db);
      const check = async () => {
        const { rows } = await db.raw<{ rows: Array<{ kept: unknown[]; expected: unknown[] }> }>(RECOUNT_CODES);
        expect(rows[0]!.kept).toEqual(rows[0]!.expected);
        return rows[0]!.kept;
      };
      expect(await check()).toHaveLength(3);

      await db('recovery_campaigns').insert(campaign(4, 'do_not_honor', 'soft', '2026-04-01T00:00:00Z'));
      await db('recovery_campaigns')
        .where({ psp_invoice_id: 'in_2' })
        .update({
          status: 'recovered',
          recovered_via: 'manual',
          recovered_at: new Date('2026-03-05T00:00:00Z'),
          closed_at: new Date('2026-03-05T00:00:00Z'),
        });
      await db('recovery_campaigns')
        .where({ psp_invoice_id: 'in_3' })
        .update({
          decline_code: 'fraudulent',
          decline_category: 'fraud',
          first_failed_at: new Date('2026-02-27T00:00:00Z'),
        });
      await db('recovery_campaigns').where({ psp_invoice_id: 'in_1' }).delete();
      expect(await check()).toHaveLength(3);

      // Deleting the workspace cascades through the triggers without resurrecting its rollups.
      await db('workspaces').where({ id: workspaceId }).delete();
      const { rows: left } = await db.raw<{ rows: Array<{ n: string }> }>(
        'SELECT count(*)::text AS n FROM decline_code_day_rollups',
      );
      expect(left[0]!.n).toBe('0');
    } finally {
      await database.drop();
    }
  });
});

/** The closing-day rollup recomputed from the source rows (closed campaigns only), beside the kept one. */
const RECOUNT_CLOSED = `
  SELECT (SELECT coalesce(json_agg(r ORDER BY r.workspace_id, r.day, r.status, r.currency), '[]') FROM (
            SELECT workspace_id, (closed_at AT TIME ZONE 'UTC')::date AS day, status, currency,
                   count(*)::bigint AS campaigns, sum(amount_cents)::bigint AS amount_cents
              FROM recovery_campaigns WHERE closed_at IS NOT NULL GROUP BY 1, 2, 3, 4) r) AS expected,
         (SELECT coalesce(json_agg(r ORDER BY r.workspace_id, r.day, r.status, r.currency), '[]') FROM (
            SELECT workspace_id, day, status, currency, sum(campaigns)::bigint AS campaigns,
                   sum(amount_cents)::bigint AS amount_cents
              FROM campaign_close_day_rollups GROUP BY 1, 2, 3, 4 HAVING sum(campaigns) <> 0) r) AS kept`;

describe('0045-campaign-close-rollups', () => {
  it('backfills the campaigns closed before it, then keeps the rollup by closing day exact under inserts, status changes and deletes', async () => {
    const database = await createEmptyDatabase();
    try {
      const { db } = database;
      const migration = MIGRATIONS.find((one) => one.name === '0045-campaign-close-rollups')!;
      await migrateLatest(db, { secretsKey: testSecretsKeyBytes() });
      await migration.down(db);
      const { workspaceId, customer, subscription } = await oneSubscriber(db);
      const campaign = (invoice: number, currency: string, failedAt: string) => ({
        workspace_id: workspaceId,
        customer_id: customer.id,
        subscription_id: subscription.id,
        psp_invoice_id: `in_${invoice}`,
        amount_cents: 100 * invoice,
        currency,
        status: 'in_flight',
        decline_code: 'insufficient_funds',
        decline_category: 'soft',
        first_failed_at: new Date(failedAt),
      });
      const recovered = (at: string) => ({
        status: 'recovered',
        recovered_via: 'retry',
        recovered_at: new Date(at),
        closed_at: new Date(at),
      });
      const closedAs = (status: 'lost' | 'abandoned', at: string) => ({ status, closed_at: new Date(at) });
      // Before the migration: one open, one recovered and one lost, closing a day apart at midnight UTC.
      await db('recovery_campaigns').insert([
        campaign(1, 'usd', '2026-02-10T00:00:00Z'),
        { ...campaign(2, 'usd', '2026-02-10T00:00:00Z'), ...recovered('2026-03-01T23:59:59.999Z') },
        { ...campaign(3, 'eur', '2026-01-05T00:00:00Z'), ...closedAs('lost', '2026-03-02T00:00:00Z') },
      ]);
      await migration.up(db);
      const check = async () => {
        const { rows } = await db.raw<{ rows: Array<{ kept: unknown[]; expected: unknown[] }> }>(RECOUNT_CLOSED);
        expect(rows[0]!.kept).toEqual(rows[0]!.expected);
        return rows[0]!.kept;
      };
      // The open campaign is in no closing day; the other two on their own days.
      expect(await check()).toHaveLength(2);

      // Inserts: several rows in one statement, closed or not.
      await db('recovery_campaigns').insert([
        campaign(4, 'jpy', '2026-03-01T00:00:00Z'),
        { ...campaign(5, 'usd', '2026-01-01T00:00:00Z'), ...closedAs('abandoned', '2026-03-02T08:00:00Z') },
        { ...campaign(6, 'usd', '2026-02-01T00:00:00Z'), ...recovered('2026-03-02T09:00:00Z') },
      ]);
      expect(await check()).toHaveLength(4);
      // Status changes: open campaigns close (one statement closes two), a closed one changes status,
      // day and amount, an open one moves its first failure (no closing day either side).
      await db('recovery_campaigns')
        .whereIn('psp_invoice_id', ['in_1', 'in_4'])
        .update(recovered('2026-03-02T10:00:00Z'));
      await check();
      await db('recovery_campaigns')
        .where({ psp_invoice_id: 'in_3' })
        .update({ status: 'abandoned', closed_at: new Date('2026-03-04T00:00:00Z'), amount_cents: 350 });
      await db('recovery_campaigns')
        .where({ psp_invoice_id: 'in_2' })
        .update({
          status: 'lost',
          recovered_via: null,
          recovered_at: null,
          closed_at: new Date('2026-03-01T12:00:00Z'),
        });
      await db('recovery_campaigns').insert(campaign(7, 'usd', '2026-03-03T00:00:00Z'));
      await db('recovery_campaigns')
        .where({ psp_invoice_id: 'in_7' })
        .update({ first_failed_at: new Date('2026-03-02T00:00:00Z') });
      await check();
      // Deletes: closed and open together.
      await db('recovery_campaigns').whereIn('psp_invoice_id', ['in_5', 'in_7', 'in_1']).delete();
      expect(await check()).toEqual([
        expect.objectContaining({
          day: '2026-03-01',
          status: 'lost',
          currency: 'usd',
          campaigns: 1,
          amount_cents: 200,
        }),
        expect.objectContaining({ day: '2026-03-02', status: 'recovered', currency: 'jpy', campaigns: 1 }),
        expect.objectContaining({ day: '2026-03-02', status: 'recovered', currency: 'usd', amount_cents: 600 }),
        expect.objectContaining({ day: '2026-03-04', status: 'abandoned', currency: 'eur', amount_cents: 350 }),
      ]);

      // Deleting the workspace cascades through the triggers without resurrecting its rollups.
      await db('workspaces').where({ id: workspaceId }).delete();
      const { rows: left } = await db.raw<{ rows: Array<{ n: string }> }>(
        'SELECT count(*)::text AS n FROM campaign_close_day_rollups',
      );
      expect(left[0]!.n).toBe('0');
    } finally {
      await database.drop();
    }
  });
});
