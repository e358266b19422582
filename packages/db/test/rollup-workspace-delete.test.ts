import { describe, expect, it } from '@jest/globals';
import { CANCEL_OUTCOMES, newId } from '@retention/core';
import type { Db } from '@retention/db';
import { useTestDatabase } from '@retention/testkit';

const database = useTestDatabase();

/** A workspace with a customer, a subscription, campaigns in every status and cancel sessions. */
async function populatedWorkspace(db: Db, amountBase: number): Promise<string> {
  const workspaceId = newId();
  const customerId = newId();
  const subscriptionId = newId();
  await db('workspaces').insert({ id: workspaceId, name: 'W' });
  await db('customers').insert({
    id: customerId,
    workspace_id: workspaceId,
    psp_customer_id: 'cus_1',
    email: 'a@b.co',
  });
  await db('subscriptions').insert({
    id: subscriptionId,
    workspace_id: workspaceId,
    customer_id: customerId,
    psp_subscription_id: 'sub_1',
    status: 'active',
    plan_name: 'Pro',
    amount_cents: 4900,
    currency: 'usd',
    interval: 'month',
  });
  const failedAt = new Date('2026-03-01T00:00:00Z');
  const closedAt = new Date('2026-03-02T05:30:00.250Z');
  await db('recovery_campaigns').insert(
    Array.from({ length: 12 }, (_, i) => ({
      workspace_id: workspaceId,
      customer_id: customerId,
      subscription_id: subscriptionId,
      psp_invoice_id: `in_${i}`,
      amount_cents: amountBase + i,
      currency: i % 2 ? 'usd' : 'eur',
      decline_code: 'insufficient_funds',
      decline_category: 'soft',
      first_failed_at: failedAt,
      ...[
        { status: 'in_flight' },
        { status: 'recovered', recovered_via: 'retry', recovered_at: closedAt, closed_at: closedAt },
        { status: 'lost', closed_at: closedAt },
        { status: 'abandoned', closed_at: closedAt },
      ][i % 4],
    })),
  );
  await db('cancel_sessions').insert(
    CANCEL_OUTCOMES.map((outcome, i) => ({
      workspace_id: workspaceId,
      customer_id: customerId,
      outcome,
      reason_code: 'other',
      monthly_mrr_cents: amountBase + i,
      currency: 'usd',
    })),
  );
  return workspaceId;
}

/** Every rollup row, and the same figures counted from the source rows. */
async function rollupsAndCounts(db: Db) {
  const query = async (sql: string) => (await db.raw<{ rows: unknown[] }>(sql)).rows;
  return {
    rollups: {
      campaigns: await query(`
        SELECT workspace_id, status, currency, decline_category, recovered_via, campaigns, amount_cents
          FROM campaign_rollups WHERE campaigns <> 0 OR amount_cents <> 0 ORDER BY 1, 2, 3, 4, 5`),
      hours: await query(
        'SELECT workspace_id, hours_to_recover, campaigns FROM recovery_time_rollups WHERE campaigns <> 0 ORDER BY 1, 2',
      ),
      sessions: await query(`
        SELECT workspace_id, outcome, currency, sessions, mrr_cents
          FROM cancel_session_rollups WHERE sessions <> 0 OR mrr_cents <> 0 ORDER BY 1, 2, 3`),
    },
    counts: {
      campaigns: await query(`
        SELECT workspace_id, status, currency, decline_category, coalesce(recovered_via, '') AS recovered_via,
               count(*) AS campaigns, sum(amount_cents)::bigint AS amount_cents
          FROM recovery_campaigns GROUP BY 1, 2, 3, 4, 5 ORDER BY 1, 2, 3, 4, 5`),
      hours: await query(`
        SELECT workspace_id, hours_between(first_failed_at, recovered_at) AS hours_to_recover, count(*) AS campaigns
          FROM recovery_campaigns WHERE status = 'recovered' GROUP BY 1, 2 ORDER BY 1, 2`),
      sessions: await query(`
        SELECT workspace_id, outcome, currency, count(*) AS sessions, sum(monthly_mrr_cents)::bigint AS mrr_cents
          FROM cancel_sessions GROUP BY 1, 2, 3 ORDER BY 1, 2, 3`),
    },
  };
}

describe('deleting a workspace', () => {
  it('cascades to its campaigns, sessions and rollups, and leaves every other rollup exact', async () => {
    const { db } = database.current;
    const kept = await populatedWorkspace(db, 1000);
    const deleted = await populatedWorkspace(db, 5000);
    const keptToo = await populatedWorkspace(db, 9000);
    const before = await rollupsAndCounts(db);
    expect(before.rollups).toEqual(before.counts);

    await db('workspaces').where({ id: deleted }).delete();

    const after = await rollupsAndCounts(db);
    expect(after.rollups).toEqual(after.counts);
    const without = <T extends { workspace_id: string }>(rows: T[]) =>
      rows.filter((row) => row.workspace_id !== deleted);
    expect(after.rollups).toEqual({
      campaigns: without(before.rollups.campaigns as Array<{ workspace_id: string }>),
      hours: without(before.rollups.hours as Array<{ workspace_id: string }>),
      sessions: without(before.rollups.sessions as Array<{ workspace_id: string }>),
    });
    for (const table of ['campaign_rollups', 'recovery_time_rollups', 'cancel_session_rollups']) {
      expect(await db(table).where({ workspace_id: deleted }).first()).toBeUndefined();
      expect(await db(table).whereIn('workspace_id', [kept, keptToo]).first()).toBeDefined();
    }
  });

  it('still applies the changes of a customer deleted from a workspace that stays', async () => {
    const { db } = database.current;
    const workspaceId = await populatedWorkspace(db, 100);
    await db('customers').where({ workspace_id: workspaceId }).delete();
    const { rollups, counts } = await rollupsAndCounts(db);
    expect(rollups).toEqual(counts);
    expect(await db('campaign_rollups').where({ workspace_id: workspaceId }).whereNot({ campaigns: 0 }).first()).toBe(
      undefined,
    );
  });
});
