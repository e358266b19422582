import { beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID as newId } from 'node:crypto';
import {
  campaignJsonSql,
  cancelSessionDetailView,
  cancelSessionJsonSql,
  customerJsonSql,
  findCampaignDetail,
  findCustomerDetail,
  listCampaigns,
  listCancelSessions,
  listCustomers,
  majorUnitsSql,
  subscriptionJsonSql,
  subscriptionSummaryJsonSql,
  toCampaign,
  toCancelSession,
  toCustomer,
  toSubscription,
  toSubscriptionSummary,
  type Db,
} from '@retention/db';
import { useTestDatabase } from '@retention/testkit';

/**
 * The API serves the JSON that Postgres builds (resource-json.ts); the domain's outputs come
 * from the mappers in resources.ts. Both must say exactly the same thing of the same row:
 * values, JSON types, timestamps to the millisecond and key order.
 */
const database = useTestDatabase();

// Text that JSON must escape, and text it must not mangle.
const AWKWARD = 'Zoë "Quote" \\ back\nslash\ttab \u2028 😀 <tag> &amp;';

const ids = {
  workspace: newId(),
  customers: [newId(), newId()],
  subscriptions: [newId(), newId()],
  campaigns: [newId(), newId(), newId()],
  sessions: [newId(), newId()],
};

async function seed(db: Db): Promise<void> {
  await db('workspaces').insert({ id: ids.workspace, name: 'W' });
  await db('customers').insert([
    {
      id: ids.customers[0],
      workspace_id: ids.workspace,
      psp_customer_id: 'cus_1',
      email: 'ann@example.com',
      name: AWKWARD,
      tags: ['vip', 'école'],
      created_at: new Date('2026-03-07T09:15:02.123Z'),
    },
    {
      id: ids.customers[1],
      workspace_id: ids.workspace,
      psp_customer_id: 'cus_2',
      email: 'bob@example.com',
      name: null,
      tags: [],
      created_at: new Date('2026-03-07T09:15:02.000Z'),
    },
  ]);
  await db('subscriptions').insert([
    {
      id: ids.subscriptions[0],
      workspace_id: ids.workspace,
      customer_id: ids.customers[0],
      psp_subscription_id: 'sub_1',
      status: 'trialing',
      plan_name: AWKWARD,
      amount_cents: 999_999_999_999,
      currency: 'jpy',
      interval: 'year',
      trial_end: new Date('2026-04-01T00:00:00.001Z'),
      current_period_end: new Date('2026-04-01T00:00:00.010Z'),
      canceled_at: new Date('2026-03-20T23:59:59.999Z'),
      created_at: new Date('2026-03-07T09:15:02.100Z'),
    },
    {
      id: ids.subscriptions[1],
      workspace_id: ids.workspace,
      customer_id: ids.customers[0],
      psp_subscription_id: 'sub_2',
      status: 'active',
      plan_name: 'Pro',
      amount_cents: 0,
      currency: 'usd',
      interval: 'month',
      trial_end: null,
      current_period_end: null,
      canceled_at: null,
      created_at: new Date('1999-12-31T23:59:59.999Z'),
    },
  ]);
  const base = {
    workspace_id: ids.workspace,
    customer_id: ids.customers[0],
    subscription_id: ids.subscriptions[0],
    currency: 'usd',
    decline_code: 'insufficient_funds',
    decline_category: 'soft',
  };
  await db('recovery_campaigns').insert([
    {
      ...base,
      id: ids.campaigns[0],
      psp_invoice_id: 'in_1',
      amount_cents: 1,
      status: 'in_flight',
      first_failed_at: new Date('2026-03-01T00:00:00.000Z'),
    },
    {
      ...base,
      id: ids.campaigns[1],
      psp_invoice_id: 'in_2',
      amount_cents: 4900,
      status: 'recovered',
      recovered_via: 'customer_update',
      first_failed_at: new Date('2026-03-02T10:00:00.050Z'),
      recovered_at: new Date('2026-03-03T10:00:00.500Z'),
      closed_at: new Date('2026-03-03T10:00:00.500Z'),
    },
    {
      ...base,
      id: ids.campaigns[2],
      psp_invoice_id: AWKWARD,
      amount_cents: 250,
      decline_code: AWKWARD,
      decline_category: 'unknown',
      status: 'lost',
      first_failed_at: new Date('2026-03-02T10:00:00.050Z'),
      closed_at: new Date('2026-03-05T00:00:00.000Z'),
    },
  ]);
  await db('cancel_sessions').insert([
    {
      id: ids.sessions[0],
      workspace_id: ids.workspace,
      customer_id: ids.customers[0],
      subscription_id: ids.subscriptions[0],
      outcome: 'saved_discount',
      reason_code: 'too_expensive',
      feedback: AWKWARD,
      monthly_mrr_cents: 4900,
      currency: 'eur',
      created_at: new Date('2026-03-04T00:00:00.007Z'),
      ended_at: new Date('2026-03-04T00:05:00.070Z'),
    },
    {
      id: ids.sessions[1],
      workspace_id: ids.workspace,
      customer_id: ids.customers[1],
      subscription_id: null,
      outcome: 'abandoned',
      reason_code: 'other',
      feedback: null,
      monthly_mrr_cents: 0,
      currency: 'usd',
      created_at: new Date('2026-03-04T00:00:00.000Z'),
      ended_at: new Date('2026-03-04T00:00:00.000Z'),
    },
  ]);
}

beforeAll(async () => {
  await seed(database.current.db);
});

/** Every row of `table` through the mapper, and through Postgres's JSON, side by side. */
async function bothWays<Row>(table: string, json: string, map: (row: Row) => unknown) {
  const { db } = database.current;
  const rows = await db(`${table} as t`)
    .where({ 't.workspace_id': ids.workspace })
    .select<Array<Row & { api_json: string }>>('t.*', db.raw(`${json}::text AS api_json`))
    .orderBy('t.id');
  expect(rows.length).toBeGreaterThan(1);
  return rows.map(({ api_json, ...row }) => ({ mapped: map(row as Row), built: JSON.parse(api_json) as unknown }));
}

describe('the JSON Postgres builds for each resource', () => {
  it.each([
    ['customers', customerJsonSql('t'), toCustomer],
    ['subscriptions', subscriptionJsonSql('t'), toSubscription],
    ['subscriptions', subscriptionSummaryJsonSql('t'), toSubscriptionSummary],
    ['recovery_campaigns', campaignJsonSql('t'), toCampaign],
    ['cancel_sessions', cancelSessionJsonSql('t'), toCancelSession],
  ] as const)('equals the mapper of %s, key order included', async (table, json, map) => {
    for (const { mapped, built } of await bothWays(table, json, map as (row: never) => unknown)) {
      expect(built).toStrictEqual(mapped);
      expect(Object.keys(built as object)).toEqual(Object.keys(mapped as object));
    }
  });

  it('is compact JSON, as JSON.stringify writes it', async () => {
    const [campaign] = await bothWays('recovery_campaigns', campaignJsonSql('t'), toCampaign);
    const { db } = database.current;
    const { rows } = await db.raw<{ rows: Array<{ json: string }> }>(
      `SELECT ${campaignJsonSql('t')}::text AS json FROM recovery_campaigns t WHERE t.id = ?`,
      [(campaign!.mapped as { id: string }).id],
    );
    expect(rows[0]!.json).toBe(JSON.stringify(campaign!.mapped));
  });
});

describe('the read queries', () => {
  it('list pages are the list envelope of the mapped rows, newest first', async () => {
    const { db } = database.current;
    const campaigns = (await listCampaigns(db, ids.workspace, {})).parse();
    // Campaigns 1 and 2 share a timestamp: the larger id comes first.
    const [tiedFirst, tiedSecond] = [ids.campaigns[1]!, ids.campaigns[2]!].sort().reverse();
    expect(campaigns).toStrictEqual({
      object: 'list',
      data: [
        expect.objectContaining({ id: tiedFirst }),
        expect.objectContaining({ id: tiedSecond }),
        expect.objectContaining({ id: ids.campaigns[0] }),
      ],
      has_more: false,
      next_cursor: '2026-03-01T00:00:00.000Z',
    });
    const customers = (await listCustomers(db, ids.workspace, { tag: 'ÉCOLE' })).parse();
    expect(customers.data.map((customer) => customer.name)).toEqual([AWKWARD]);
    const sessions = (
      await listCancelSessions(db, ids.workspace, { cursor: new Date('2026-03-04T00:00:00.007Z') })
    ).parse();
    expect(sessions).toStrictEqual({
      object: 'list',
      data: [expect.objectContaining({ id: ids.sessions[1], subscription_id: null, feedback: null })],
      has_more: false,
      next_cursor: '2026-03-04T00:00:00.000Z',
    });
    expect((await listCancelSessions(db, newId(), {})).text).toBe(
      '{"object":"list","data":[],"has_more":false,"next_cursor":null}',
    );
  });

  it('a campaign embeds its customer and the summary of its subscription', async () => {
    const { db } = database.current;
    const [customer] = await db('customers').where({ id: ids.customers[0] });
    const [subscription] = await db('subscriptions').where({ id: ids.subscriptions[0] });
    const [campaign] = await db('recovery_campaigns').where({ id: ids.campaigns[1] });
    expect((await findCampaignDetail(db, ids.workspace, ids.campaigns[1]!))!.parse()).toStrictEqual({
      ...toCampaign(campaign),
      customer: toCustomer(customer),
      subscription: toSubscriptionSummary(subscription),
    });
    expect(await findCampaignDetail(db, newId(), ids.campaigns[1]!)).toBeUndefined();
  });

  it('a customer embeds its subscriptions and its newest campaigns, newest first', async () => {
    const { db } = database.current;
    const [customer] = await db('customers').where({ id: ids.customers[0] });
    const subscriptions = await db('subscriptions')
      .where({ customer_id: ids.customers[0] })
      .orderBy([
        { column: 'created_at', order: 'desc' },
        { column: 'id', order: 'desc' },
      ]);
    const campaigns = await db('recovery_campaigns')
      .where({ customer_id: ids.customers[0] })
      .orderBy([
        { column: 'first_failed_at', order: 'desc' },
        { column: 'id', order: 'desc' },
      ]);
    expect((await findCustomerDetail(db, ids.workspace, ids.customers[0]!))!.parse()).toStrictEqual({
      ...toCustomer(customer),
      subscriptions: subscriptions.map(toSubscription),
      recent_campaigns: campaigns.map(toCampaign),
    });
    expect((await findCustomerDetail(db, ids.workspace, ids.customers[1]!))!.parse()).toMatchObject({
      subscriptions: [],
      recent_campaigns: [],
    });
  });

  it('a cancel session embeds its customer, its subscription (null when none) and its timeline: the mapped rows, byte for byte', async () => {
    const { db } = database.current;
    for (const id of ids.sessions) {
      const [session] = await db('cancel_sessions').where({ id });
      const [customer] = await db('customers').where({ id: session.customer_id });
      const subscription =
        session.subscription_id === null
          ? null
          : toSubscription((await db('subscriptions').where({ id: session.subscription_id }))[0]);
      expect((await cancelSessionDetailView(db, ids.workspace, id)).text).toBe(
        // Inserted as rows, with no event: an empty timeline (data-pages.test reads one with its event).
        JSON.stringify({ ...toCancelSession(session), customer: toCustomer(customer), subscription, timeline: [] }),
      );
    }
    await expect(cancelSessionDetailView(db, newId(), ids.sessions[0]!)).rejects.toMatchObject({ type: 'not_found' });
  });
});

describe('majorUnitsSql', () => {
  it("writes an amount in its currency's major units, with as many decimals as the currency has", async () => {
    const cases: Array<[amount: number, currency: string, expected: string]> = [
      [4200, 'usd', '42.00'],
      [5, 'eur', '0.05'],
      [2500, 'jpy', '2500'],
      [1234, 'kwd', '1.234'],
      [0, 'gbp', '0.00'],
      [1_000_000_000_000, 'usd', '10000000000.00'],
    ];
    for (const [amount, currency, expected] of cases) {
      const { rows } = await database.current.db.raw<{ rows: Array<{ major: string }> }>(
        `SELECT (${majorUnitsSql('amount', 'currency')})::text AS major FROM (SELECT ?::bigint AS amount, ?::text AS currency) AS row`,
        [amount, currency],
      );
      expect([amount, currency, rows[0]!.major]).toEqual([amount, currency, expected]);
    }
  });
});
