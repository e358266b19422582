import { beforeAll, describe, expect, it } from '@jest/globals';
import { CAMPAIGN_STATUSES, CANCEL_OUTCOMES, newId } from '@retention/core';
import { pgErrorCode, type Db } from '@retention/db';
import { useTestDatabase } from '@retention/testkit';

const database = useTestDatabase();

interface Graph {
  workspaceId: string;
  customerId: string;
  subscriptionId: string;
}

async function graph(db: Db): Promise<Graph> {
  const workspaceId = newId();
  const customerId = newId();
  const subscriptionId = newId();
  await db('workspaces').insert({ id: workspaceId, name: 'W' });
  await db('customers').insert({
    id: customerId,
    workspace_id: workspaceId,
    psp_customer_id: `cus_${customerId}`,
    email: 'a@b.co',
  });
  await db('subscriptions').insert({
    id: subscriptionId,
    workspace_id: workspaceId,
    customer_id: customerId,
    psp_subscription_id: `sub_${subscriptionId}`,
    status: 'active',
    plan_name: 'Pro',
    amount_cents: 4900,
    currency: 'usd',
    interval: 'month',
  });
  return { workspaceId, customerId, subscriptionId };
}

function campaign(g: Graph, overrides: Record<string, unknown> = {}) {
  return {
    workspace_id: g.workspaceId,
    customer_id: g.customerId,
    subscription_id: g.subscriptionId,
    psp_invoice_id: `in_${newId()}`,
    amount_cents: 4900,
    currency: 'usd',
    status: 'in_flight',
    decline_code: 'insufficient_funds',
    decline_category: 'soft',
    first_failed_at: new Date('2026-03-01T00:00:00Z'),
    ...overrides,
  };
}

async function violation(work: Promise<unknown>): Promise<string | undefined> {
  try {
    await work;
  } catch (error) {
    return pgErrorCode(error);
  }
  return undefined;
}

const CHECK = '23514';
const FOREIGN_KEY = '23503';
const UNIQUE = '23505';

describe('schema constraints', () => {
  let g: Graph;
  let other: Graph;
  beforeAll(async () => {
    g = await graph(database.current.db);
    other = await graph(database.current.db);
  });

  it('accepts every campaign status and refuses anything else', async () => {
    const { db } = database.current;
    for (const status of CAMPAIGN_STATUSES) {
      const closing =
        status === 'in_flight'
          ? {}
          : status === 'recovered'
            ? { recovered_via: 'retry', recovered_at: new Date(), closed_at: new Date() }
            : { closed_at: new Date() };
      await db('recovery_campaigns').insert(campaign(g, { status, ...closing }));
    }
    expect(await violation(db('recovery_campaigns').insert(campaign(g, { status: 'pending' })))).toBe(CHECK);
  });

  it.each([
    ['a negative amount', { amount_cents: -1 }],
    ['an uppercase currency', { currency: 'USD' }],
    ['a four-letter currency', { currency: 'usdx' }],
    ['an unknown decline category', { decline_category: 'weird' }],
    [
      'an unknown recovered_via',
      { status: 'recovered', recovered_via: 'magic', recovered_at: new Date(), closed_at: new Date() },
    ],
    ['recovered without recovered_via', { status: 'recovered', recovered_at: new Date(), closed_at: new Date() }],
    ['in_flight with closed_at', { closed_at: new Date() }],
    ['lost without closed_at', { status: 'lost' }],
    ['lost with recovered_via', { status: 'lost', closed_at: new Date(), recovered_via: 'retry' }],
  ])('refuses a campaign with %s', async (_label, overrides) => {
    expect(await violation(database.current.db('recovery_campaigns').insert(campaign(g, overrides)))).toBe(CHECK);
  });

  it('keeps one campaign per invoice in a workspace, but the same invoice id may exist elsewhere', async () => {
    const { db } = database.current;
    await db('recovery_campaigns').insert(campaign(g, { psp_invoice_id: 'in_same' }));
    expect(await violation(db('recovery_campaigns').insert(campaign(g, { psp_invoice_id: 'in_same' })))).toBe(UNIQUE);
    await db('recovery_campaigns').insert(campaign(other, { psp_invoice_id: 'in_same' }));
  });

  it('never lets a row point into another workspace', async () => {
    const { db } = database.current;
    const crossed = campaign(g, { customer_id: other.customerId, subscription_id: other.subscriptionId });
    expect(await violation(db('recovery_campaigns').insert(crossed))).toBe(FOREIGN_KEY);
    const wrongSubscription = campaign(g, { subscription_id: other.subscriptionId });
    expect(await violation(db('recovery_campaigns').insert(wrongSubscription))).toBe(FOREIGN_KEY);
  });

  it('accepts every cancel outcome and refuses anything else', async () => {
    const { db } = database.current;
    const session = (outcome: string) => ({
      workspace_id: g.workspaceId,
      customer_id: g.customerId,
      outcome,
      reason_code: 'other',
      monthly_mrr_cents: 100,
      currency: 'eur',
    });
    for (const outcome of CANCEL_OUTCOMES) await db('cancel_sessions').insert(session(outcome));
    expect(await violation(db('cancel_sessions').insert(session('saved')))).toBe(CHECK);
    expect(await violation(db('cancel_sessions').insert({ ...session('canceled'), reason_code: 'bored' }))).toBe(CHECK);
  });

  it('refuses tokens that are not a SHA-256 hash and tags that are not lowercase', async () => {
    const { db } = database.current;
    const token = { workspace_id: g.workspaceId, name: 't', token_hint: 'abcd' };
    expect(await violation(db('api_tokens').insert({ ...token, token_hash: 'sk_live_plaintext' }))).toBe(CHECK);
    expect(
      await violation(
        db('customers').insert({
          workspace_id: g.workspaceId,
          psp_customer_id: 'cus_tags',
          email: 'a@b.co',
          tags: ['VIP'],
        }),
      ),
    ).toBe(CHECK);
  });

  it('keeps timestamps at millisecond precision, so a cursor taken from a row selects exactly the rows after it', async () => {
    const { db } = database.current;
    const id = newId();
    await db.raw(
      `INSERT INTO recovery_campaigns (id, workspace_id, customer_id, subscription_id, psp_invoice_id, amount_cents,
        currency, status, decline_code, decline_category, first_failed_at)
       VALUES (?, ?, ?, ?, ?, 1, 'usd', 'in_flight', 'x', 'unknown', '2026-03-07T09:15:02.123456Z')`,
      [id, g.workspaceId, g.customerId, g.subscriptionId, `in_${id}`],
    );
    const { rows } = await db.raw<{ rows: Array<{ text: string }> }>(
      "SELECT to_char(first_failed_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US') AS text FROM recovery_campaigns WHERE id = ?",
      [id],
    );
    expect(rows[0]!.text).toBe('2026-03-07T09:15:02.123000');
  });
});

describe('stats rollups', () => {
  /** The rollups, and the same figures computed from the source rows. */
  async function compare(db: Db) {
    const rollup = await db.raw<{ rows: unknown[] }>(`
      SELECT workspace_id, status, currency, decline_category, recovered_via, campaigns, amount_cents
        FROM campaign_rollups WHERE campaigns > 0 ORDER BY 1, 2, 3, 4, 5`);
    const direct = await db.raw<{ rows: unknown[] }>(`
      SELECT workspace_id, status, currency, decline_category, coalesce(recovered_via, '') AS recovered_via,
             count(*) AS campaigns, sum(amount_cents)::bigint AS amount_cents
        FROM recovery_campaigns GROUP BY 1, 2, 3, 4, 5 ORDER BY 1, 2, 3, 4, 5`);
    const hours = await db.raw<{ rows: unknown[] }>(
      'SELECT workspace_id, hours_to_recover, campaigns FROM recovery_time_rollups WHERE campaigns > 0 ORDER BY 1, 2',
    );
    const directHours = await db.raw<{ rows: unknown[] }>(`
      SELECT workspace_id, hours_between(first_failed_at, recovered_at) AS hours_to_recover, count(*) AS campaigns
        FROM recovery_campaigns WHERE status = 'recovered' GROUP BY 1, 2 ORDER BY 1, 2`);
    const sessions = await db.raw<{ rows: unknown[] }>(
      'SELECT workspace_id, outcome, currency, sessions, mrr_cents FROM cancel_session_rollups WHERE sessions > 0 ORDER BY 1, 2, 3',
    );
    const directSessions = await db.raw<{ rows: unknown[] }>(`
      SELECT workspace_id, outcome, currency, count(*) AS sessions, sum(monthly_mrr_cents)::bigint AS mrr_cents
        FROM cancel_sessions GROUP BY 1, 2, 3 ORDER BY 1, 2, 3`);
    expect(rollup.rows).toEqual(direct.rows);
    expect(hours.rows).toEqual(directHours.rows);
    expect(sessions.rows).toEqual(directSessions.rows);
  }

  it('stay equal to counts over the source rows through inserts, updates, bulk changes and deletes', async () => {
    const { db } = database.current;
    const g = await graph(db);
    const base = new Date('2026-01-01T00:00:00Z').getTime();
    const currencies = ['usd', 'eur', 'jpy'];
    const rows = Array.from({ length: 300 }, (_, i) =>
      campaign(g, {
        amount_cents: 100 + i,
        currency: currencies[i % 3],
        decline_category: i % 2 ? 'soft' : 'fraud',
        first_failed_at: new Date(base + i * 3_600_000),
      }),
    );
    await db('recovery_campaigns').insert(rows);
    await compare(db);

    // Single-row transitions, as the domain makes them.
    const ids = (await db('recovery_campaigns')
      .where({ workspace_id: g.workspaceId, status: 'in_flight' })
      .pluck('id')) as string[];
    for (const [index, id] of ids.slice(0, 40).entries()) {
      await db('recovery_campaigns')
        .where({ id })
        .update({
          status: 'recovered',
          recovered_via: index % 2 ? 'retry' : 'manual',
          recovered_at: db.raw("first_failed_at + interval '37 hours'"),
          closed_at: db.raw("first_failed_at + interval '37 hours'"),
        });
    }
    await compare(db);

    // A bulk close, as the stale-campaign job makes it, and a no-op update.
    await db('recovery_campaigns')
      .where({ workspace_id: g.workspaceId, status: 'in_flight', currency: 'eur' })
      .update({ status: 'abandoned', closed_at: db.fn.now() });
    await db('recovery_campaigns').where({ workspace_id: g.workspaceId }).update({ updated_at: db.fn.now() });
    await compare(db);

    await db('recovery_campaigns').whereIn('id', ids.slice(0, 10)).delete();
    await compare(db);

    await db('cancel_sessions').insert(
      CANCEL_OUTCOMES.map((outcome, i) => ({
        workspace_id: g.workspaceId,
        customer_id: g.customerId,
        outcome,
        reason_code: 'other',
        monthly_mrr_cents: 1000 * (i + 1),
        currency: currencies[i % 3],
      })),
    );
    await db('cancel_sessions')
      .where({ workspace_id: g.workspaceId, outcome: 'abandoned' })
      .update({ outcome: 'canceled' });
    await compare(db);
  });

  it('stay exact under concurrent writers', async () => {
    const { db } = database.current;
    const g = await graph(db);
    const ids: Array<{ id: string }> = await db('recovery_campaigns')
      .insert(Array.from({ length: 60 }, () => campaign(g)))
      .returning('id');
    await Promise.all(
      ids.map(({ id }, i) =>
        db.transaction(async (trx) => {
          await trx('recovery_campaigns')
            .where({ id })
            .update(
              i % 2
                ? { status: 'lost', closed_at: trx.fn.now() }
                : { status: 'recovered', recovered_via: 'retry', recovered_at: trx.fn.now(), closed_at: trx.fn.now() },
            );
          await trx('recovery_campaigns').insert(campaign(g));
        }),
      ),
    );
    await compare(db);
  });
});
