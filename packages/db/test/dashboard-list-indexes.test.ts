import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from '@jest/globals';
import {
  campaignListPage,
  cancelSessionListPage,
  customerDetailView,
  encodeOpaqueCursor,
  listScope,
} from '@retention/db';
import { useTestDatabase } from '@retention/testkit';
import { planOf } from './support/query-plan.js';

/**
 * The dashboard's lists and details read through an index whatever the filter's selectivity
 * (migrations 0014 and 0042): a filter value with no rows, or one customer's sessions, is one range of a
 * (workspace_id, filter, time DESC, id DESC) index, never a walk over the workspace's list.
 */
const database = useTestDatabase();

interface Workspace {
  workspaceId: string;
  customerIds: string[];
}

let w: Workspace;

beforeAll(async () => {
  const { db } = database.current;
  const base = Date.UTC(2025, 0, 1);
  const workspaces: Workspace[] = [];
  // Two workspaces of 20,000 campaigns and 5,000 cancel sessions over 50 customers: enough that
  // walking a list index and filtering costs more than the filter's own index.
  for (let n = 0; n < 2; n += 1) {
    const workspaceId = randomUUID();
    await db('workspaces').insert({ id: workspaceId, name: `W${n}` });
    const customers = Array.from({ length: 50 }, (_, i) => ({
      id: randomUUID(),
      workspace_id: workspaceId,
      psp_customer_id: `cus_${i}`,
      email: `c${i}@bulk.test`,
    }));
    await db.batchInsert('customers', customers, 1_000);
    const subscriptions = customers.map((customer) => ({
      id: randomUUID(),
      workspace_id: workspaceId,
      customer_id: customer.id,
      psp_subscription_id: `sub_${customer.psp_customer_id}`,
      status: 'active',
      plan_name: 'Pro',
      amount_cents: 4900,
      currency: 'usd',
      interval: 'month',
    }));
    await db.batchInsert('subscriptions', subscriptions, 1_000);
    await db.batchInsert(
      'recovery_campaigns',
      Array.from({ length: 20_000 }, (_, i) => ({
        workspace_id: workspaceId,
        customer_id: customers[i % 50]!.id,
        subscription_id: subscriptions[i % 50]!.id,
        psp_invoice_id: `in_${i}`,
        amount_cents: 100,
        currency: 'usd',
        status: 'in_flight',
        decline_code: 'generic_decline',
        decline_category: 'soft',
        first_failed_at: new Date(base + i * 1000),
      })),
      1_000,
    );
    await db.batchInsert(
      'cancel_sessions',
      Array.from({ length: 5_000 }, (_, i) => ({
        workspace_id: workspaceId,
        customer_id: customers[i % 50]!.id,
        outcome: 'canceled',
        reason_code: 'other',
        monthly_mrr_cents: 100,
        currency: 'usd',
        created_at: new Date(base + i * 1000),
        ended_at: new Date(base + i * 1000),
      })),
      1_000,
    );
    workspaces.push({ workspaceId, customerIds: customers.map((customer) => customer.id) });
  }
  w = workspaces[0]!;
  await db.raw('ANALYZE customers, subscriptions, recovery_campaigns, cancel_sessions');
});

describe('dashboard list indexes', () => {
  it('campaigns of a decline category with no rows, first page and after a cursor', async () => {
    const { db } = database.current;
    const filters = { decline_category: 'fraud' as const };
    const first = await planOf(db, 'recovery_campaigns', () =>
      campaignListPage(db, w.workspaceId, filters, { limit: 50 }),
    );
    // (A Sort of the at most one row the plan expects is free; the index range is the point.)
    expect(first).toContain('recovery_campaigns_category_idx');
    const cursor = encodeOpaqueCursor(new Date(Date.UTC(2025, 0, 1, 3)), randomUUID(), listScope('campaigns', filters));
    const deep = await planOf(db, 'recovery_campaigns', () =>
      campaignListPage(db, w.workspaceId, filters, { limit: 50, cursor }),
    );
    expect(deep).toContain('recovery_campaigns_category_idx');
  });

  it('sorted by amount or MRR (0043), a first page and one after a cursor read their index, never sorting the workspace', async () => {
    const { db } = database.current;
    for (const sort of ['-amount', 'amount'] as const) {
      const first = await planOf(db, 'recovery_campaigns', () =>
        campaignListPage(db, w.workspaceId, { sort }, { limit: 50 }),
      );
      expect(first).toContain('recovery_campaigns_amount_idx');
      expect(first).not.toContain('"Node Type":"Sort"');
      const page = await campaignListPage(db, w.workspaceId, { sort }, { limit: 50 });
      const cursor = (JSON.parse(page.text) as { next_cursor: string }).next_cursor;
      const deep = await planOf(db, 'recovery_campaigns', () =>
        campaignListPage(db, w.workspaceId, { sort }, { limit: 50, cursor }),
      );
      // The cursor bounds the index range itself; the planner may then sort the few rows it expects
      // past it (a Sort of one row is free), as the other deep pages here.
      expect(deep).toMatch(
        /"Index Name":"recovery_campaigns_amount_idx".*"Index Cond":"[^"]*ROW\(currency, amount_cents, id\)/,
      );
    }
    const sessions = await planOf(db, 'cancel_sessions', () =>
      cancelSessionListPage(db, w.workspaceId, { sort: '-monthly_mrr' }, { limit: 50 }),
    );
    expect(sessions).toContain('cancel_sessions_mrr_idx');
    expect(sessions).not.toContain('"Node Type":"Sort"');
  });

  it('cancel sessions of a reason with no rows', async () => {
    const { db } = database.current;
    const plan = await planOf(db, 'cancel_sessions', () =>
      cancelSessionListPage(db, w.workspaceId, { reason_code: 'unused' }, { limit: 50 }),
    );
    expect(plan).toContain('cancel_sessions_reason_idx');
  });

  it('campaigns by the start of an invoice id, through its text_pattern_ops index (0042)', async () => {
    const { db } = database.current;
    const page = () => campaignListPage(db, w.workspaceId, { q: 'in_1234' }, { limit: 50 });
    // in_1234 and in_12340 to in_12349: the start matched, in no other workspace.
    const listed = (await page()).parse();
    expect(listed.data.map((row) => row.psp_invoice_id).sort()).toEqual(
      ['in_1234', ...Array.from({ length: 10 }, (_, i) => `in_1234${i}`)].sort(),
    );
    // The unique key's index cannot serve LIKE 'in\_1234%' outside the C collation: without 0042
    // this read every campaign.
    expect(await planOf(db, 'recovery_campaigns', page)).toContain('recovery_campaigns_invoice_prefix_idx');
  });

  it('cancel sessions of a range of days, a range of the list index', async () => {
    const { db } = database.current;
    const filters = { from: new Date(Date.UTC(2025, 0, 1, 0, 30)), to: new Date(Date.UTC(2025, 0, 1, 0, 40)) };
    const listed = (await cancelSessionListPage(db, w.workspaceId, filters, { limit: 50 })).parse();
    expect(listed.data).toHaveLength(50);
    expect(listed.has_more).toBe(true);
    const plan = await planOf(db, 'cancel_sessions', () =>
      cancelSessionListPage(db, w.workspaceId, filters, { limit: 50 }),
    );
    expect(plan).toContain('cancel_sessions_list_idx');
  });

  it("a customer's newest cancel sessions, for its detail", async () => {
    const { db } = database.current;
    const detail = (await customerDetailView(db, w.workspaceId, w.customerIds[7]!)).parse();
    expect(detail.cancel_sessions).toHaveLength(50);
    expect(detail.campaigns).toHaveLength(50);
    const plan = await planOf(db, 'cancel_sessions', () => customerDetailView(db, w.workspaceId, w.customerIds[7]!));
    // The index bounds the read to this customer's rows; whether the planner then walks it in
    // order or sorts the few rows it found depends on its statistics, so only the index is held.
    expect(plan).toContain('cancel_sessions_customer_idx');
  });
});
