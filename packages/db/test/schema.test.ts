import { beforeAll, describe, expect, it } from '@jest/globals';
import {
  ATTEMPT_OUTCOMES,
  CAMPAIGN_STATUSES,
  CANCEL_OUTCOMES,
  DELIVERY_STATUSES,
  EVENT_TYPES,
  hashApiToken,
  newId,
  sealSecret,
  PROCESSOR_STATUSES,
  SUBSCRIPTION_INTERVALS,
  SUBSCRIPTION_STATUSES,
  USER_ROLES,
} from '@retention/core';
import { listCancelSessions, listCustomers, pgErrorCode, type Db } from '@retention/db';
import { useTestDatabase } from '@retention/testkit';
import { planOf } from './support/query-plan.js';

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
const NOT_NULL = '23502';
/** A signing secret as it is stored: sealed (the key does not matter to the schema). */
const SEALED = sealSecret(Buffer.alloc(32, 7), 'whsec_abc');
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

  it("never lets a processor event's workspace differ from its connection's, and deletes it with its connection", async () => {
    const { db } = database.current;
    const connectionId = newId();
    await db('processor_connections').insert({
      id: connectionId,
      workspace_id: g.workspaceId,
      provider: 'stripe',
      status: 'connected',
      webhook_secret_sealed: 'sealed',
      webhook_secret_last4: 'abcd',
    });
    const event = (workspaceId: string, id: string) => ({
      connection_id: connectionId,
      workspace_id: workspaceId,
      psp_event_id: id,
      type: 'customer.created',
      psp_created_at: new Date(),
      payload: JSON.stringify({ id, object: 'event' }),
    });
    expect(await violation(db('processor_events').insert(event(other.workspaceId, 'evt_crossed')))).toBe(FOREIGN_KEY);
    await db('processor_events').insert(event(g.workspaceId, 'evt_own'));
    // The text is kept as it was sent (json, not jsonb), an object or nothing.
    expect(
      await violation(db('processor_events').insert({ ...event(g.workspaceId, 'evt_array'), payload: '[1]' })),
    ).toBe(CHECK);
    await db('processor_connections').where({ id: connectionId }).delete();
    expect(await db('processor_events').where({ connection_id: connectionId })).toEqual([]);
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

  it('keeps every timestamp column of the schema at millisecond precision', async () => {
    const { rows } = await database.current.db.raw<{
      rows: Array<{ table_name: string; column_name: string; datetime_precision: number }>;
    }>(
      `SELECT table_name, column_name, datetime_precision FROM information_schema.columns
        WHERE table_schema = 'public' AND data_type LIKE 'timestamp%' AND table_name NOT LIKE 'knex%'
        ORDER BY 1, 2`,
    );
    expect(rows.length).toBeGreaterThan(30);
    expect(rows.filter((row) => row.datetime_precision !== 3)).toEqual([]);
    const types = await database.current.db.raw<{ rows: unknown[] }>(
      `SELECT table_name, column_name FROM information_schema.columns
        WHERE table_schema = 'public' AND data_type = 'timestamp without time zone'`,
    );
    expect(types.rows).toEqual([]);
  });

  it('refuses a subscription status or interval, a user role or a processor status outside the enumerations', async () => {
    const { db } = database.current;
    const subscription = (fields: Record<string, unknown>) => ({
      workspace_id: g.workspaceId,
      customer_id: g.customerId,
      psp_subscription_id: `sub_${newId()}`,
      status: 'active',
      plan_name: 'Pro',
      amount_cents: 100,
      currency: 'usd',
      interval: 'month',
      ...fields,
    });
    for (const status of SUBSCRIPTION_STATUSES) await db('subscriptions').insert(subscription({ status }));
    for (const interval of SUBSCRIPTION_INTERVALS) await db('subscriptions').insert(subscription({ interval }));
    expect(await violation(db('subscriptions').insert(subscription({ status: 'expired' })))).toBe(CHECK);
    expect(await violation(db('subscriptions').insert(subscription({ interval: 'week' })))).toBe(CHECK);

    for (const role of USER_ROLES) {
      await db('users').insert({ workspace_id: g.workspaceId, email: `${role}@roles.test`, role });
    }
    expect(
      await violation(db('users').insert({ workspace_id: g.workspaceId, email: 'root@roles.test', role: 'root' })),
    ).toBe(CHECK);

    for (const status of PROCESSOR_STATUSES) await db('workspaces').insert({ name: 'P', processor_status: status });
    expect(await violation(db('workspaces').insert({ name: 'P', processor_status: 'syncing' }))).toBe(CHECK);
  });

  it('refuses webhook rows outside their enumerations and rules', async () => {
    const { db } = database.current;
    const endpoint = (fields: Record<string, unknown> = {}) => ({
      workspace_id: g.workspaceId,
      name: 'e',
      url: 'https://e.example.com/hook',
      signing_secret_sealed: SEALED,
      ...fields,
    });
    const [saved] = await db('webhook_endpoints')
      .insert(endpoint({ event_types: EVENT_TYPES }))
      .returning<Array<{ id: string }>>('id');
    for (const fields of [
      { url: 'http://e.example.com/hook' },
      { event_types: ['recovery.exploded'] },
      // Only a sealed value is stored: a plaintext secret, or anything else, is refused.
      { signing_secret_sealed: 'whsec_abc' },
      { signing_secret_sealed: 'v1.plain' },
      { previous_signing_secret_sealed: 'whsec_abc', previous_secret_expires_at: new Date() },
      // The previous secret and its expiry: both or neither.
      { previous_signing_secret_sealed: SEALED },
      { previous_secret_expires_at: new Date() },
      { enabled: false },
      { enabled: true, disabled_reason: 'manual' },
      { enabled: false, disabled_reason: 'bored' },
      { failure_count: -1 },
    ]) {
      expect([fields, await violation(db('webhook_endpoints').insert(endpoint(fields)))]).toEqual([fields, CHECK]);
    }
    expect(await violation(db('webhook_endpoints').insert(endpoint({ signing_secret_sealed: null })))).toBe(NOT_NULL);
    await db('webhook_endpoints').insert(
      endpoint({ previous_signing_secret_sealed: SEALED, previous_secret_expires_at: new Date() }),
    );

    const delivery = (fields: Record<string, unknown> = {}) => ({
      workspace_id: g.workspaceId,
      endpoint_id: saved!.id,
      event_type: 'ping',
      status: 'succeeded',
      attempt_count: 1,
      ...fields,
    });
    for (const status of DELIVERY_STATUSES) {
      const next = status === 'pending' ? { next_attempt_at: new Date() } : {};
      await db('webhook_deliveries').insert(delivery({ status, ...next }));
    }
    const [kept] = await db('webhook_deliveries').insert(delivery()).returning<Array<{ id: string }>>('id');
    for (const fields of [
      { event_type: 'recovery.exploded' },
      { status: 'sent' },
      { status: 'pending' },
      { event_type: 'recovery.opened' },
      { attempt_count: -1 },
      // Only a pending delivery can have a job released to Redis.
      { queued_at: new Date() },
    ]) {
      expect([fields, await violation(db('webhook_deliveries').insert(delivery(fields)))]).toEqual([fields, CHECK]);
    }

    const attempt = (fields: Record<string, unknown>) => ({
      delivery_id: kept!.id,
      endpoint_id: saved!.id,
      event_type: 'ping',
      attempt: 1,
      outcome: 'failed',
      error: 'timeout',
      duration_ms: 10,
      url: 'https://hooks.example.com/a',
      ...fields,
    });
    for (const [index, outcome] of ATTEMPT_OUTCOMES.entries()) {
      await db('webhook_attempts').insert(
        attempt({ attempt: index + 1, outcome, error: outcome === 'succeeded' ? null : 'x' }),
      );
    }
    for (const fields of [
      { attempt: 10, event_type: 'recovery.exploded' },
      { attempt: 11, outcome: 'exploded' },
      { attempt: 12, outcome: 'succeeded' },
      { attempt: 13, error: null },
      { attempt: 0 },
      { attempt: 14, http_status: 42 },
    ]) {
      expect([fields, await violation(db('webhook_attempts').insert(attempt(fields)))]).toEqual([fields, CHECK]);
    }
  });

  it('refuses a campaign closed before its first failure, or recovered at another time than it closed', async () => {
    const { db } = database.current;
    const failed = new Date('2026-03-01T00:00:00Z');
    const before = new Date('2026-02-28T23:59:59.999Z');
    expect(
      await violation(
        db('recovery_campaigns').insert(campaign(g, { status: 'lost', first_failed_at: failed, closed_at: before })),
      ),
    ).toBe(CHECK);
    const recovered = { status: 'recovered', recovered_via: 'retry', first_failed_at: failed };
    expect(
      await violation(
        db('recovery_campaigns').insert(
          campaign(g, { ...recovered, recovered_at: failed, closed_at: new Date('2026-03-02T00:00:00Z') }),
        ),
      ),
    ).toBe(CHECK);
    await db('recovery_campaigns').insert(campaign(g, { ...recovered, recovered_at: failed, closed_at: failed }));
  });

  it('refuses tags that are not trimmed or are empty', async () => {
    const { db } = database.current;
    const customer = (tags: string[]) => ({
      workspace_id: g.workspaceId,
      psp_customer_id: `cus_${newId()}`,
      email: 'a@b.co',
      tags,
    });
    await db('customers').insert(customer(['vip', 'churn-risk', 'two words']));
    for (const tags of [[' vip'], ['vip '], [''], ['ok', 'VIP']]) {
      expect([tags, await violation(db('customers').insert(customer(tags)))]).toEqual([tags, CHECK]);
    }
  });

  it("deletes a workspace's deliveries and their attempts with it, through its endpoints", async () => {
    const { db } = database.current;
    const doomed = await graph(db);
    const [endpoint] = await db('webhook_endpoints')
      .insert({
        workspace_id: doomed.workspaceId,
        name: 'e',
        url: 'https://e.example.com',
        signing_secret_sealed: SEALED,
      })
      .returning<Array<{ id: string }>>('id');
    const [delivery] = await db('webhook_deliveries')
      .insert({ workspace_id: doomed.workspaceId, endpoint_id: endpoint!.id, event_type: 'ping', status: 'succeeded' })
      .returning<Array<{ id: string }>>('id');
    await db('webhook_attempts').insert({
      delivery_id: delivery!.id,
      endpoint_id: endpoint!.id,
      event_type: 'ping',
      attempt: 1,
      outcome: 'succeeded',
      http_status: 200,
      duration_ms: 3,
      url: 'https://hooks.example.com/doomed',
    });
    await db('workspaces').where({ id: doomed.workspaceId }).delete();
    expect(await db('webhook_deliveries').where({ id: delivery!.id })).toEqual([]);
    expect(await db('webhook_attempts').where({ delivery_id: delivery!.id })).toEqual([]);
  });

  it("never lets a delivery use another workspace's endpoint, or a campaign name another workspace's user", async () => {
    const { db } = database.current;
    const [foreignEndpoint] = await db('webhook_endpoints')
      .insert({
        workspace_id: other.workspaceId,
        name: 'e',
        url: 'https://e.example.com',
        signing_secret_sealed: SEALED,
      })
      .returning<Array<{ id: string }>>('id');
    expect(
      await violation(
        db('webhook_deliveries').insert({
          workspace_id: g.workspaceId,
          endpoint_id: foreignEndpoint!.id,
          event_type: 'ping',
          status: 'succeeded',
        }),
      ),
    ).toBe(FOREIGN_KEY);

    const [foreignUser] = await db('users')
      .insert({ workspace_id: other.workspaceId, email: 'x@other.test', role: 'owner' })
      .returning<Array<{ id: string }>>('id');
    const lost = { status: 'lost', closed_at: new Date('2026-03-02T00:00:00Z') };
    expect(
      await violation(db('recovery_campaigns').insert(campaign(g, { ...lost, closed_by_user_id: foreignUser!.id }))),
    ).toBe(FOREIGN_KEY);

    // A workspace that does not exist has no endpoint either: refused by the endpoint's key.
    expect(
      await violation(
        db('webhook_deliveries').insert({
          workspace_id: '00000000-0000-4000-8000-000000000000',
          endpoint_id: foreignEndpoint!.id,
          event_type: 'ping',
          status: 'succeeded',
        }),
      ),
    ).toBe(FOREIGN_KEY);

    // Removing the user clears only the user column: the campaign stays in its workspace.
    const [ownUser] = await db('users')
      .insert({ workspace_id: g.workspaceId, email: 'closer@own.test', role: 'member' })
      .returning<Array<{ id: string }>>('id');
    const [closed] = await db('recovery_campaigns')
      .insert(campaign(g, { ...lost, closed_by_user_id: ownUser!.id }))
      .returning<Array<{ id: string }>>('id');
    await db('users').where({ id: ownUser!.id }).delete();
    expect(await db('recovery_campaigns').where({ id: closed!.id }).first()).toMatchObject({
      workspace_id: g.workspaceId,
      closed_by_user_id: null,
    });
  });
});

describe('list and lookup indexes', () => {
  let g: Graph;
  beforeAll(async () => {
    const { db } = database.current;
    g = await graph(db);
    // Enough rows, spread over workspaces, that a sequential scan and sort would cost more.
    const noise = await graph(db);
    const base = Date.UTC(2025, 0, 1);
    for (const workspace of [g, noise]) {
      await db.batchInsert(
        'customers',
        Array.from({ length: 5_000 }, (_, i) => ({
          workspace_id: workspace.workspaceId,
          psp_customer_id: `cus_${i}`,
          email: `c${i}@bulk.test`,
          tags: i === 4_321 ? ['rare'] : ['common'],
          created_at: new Date(base + i * 1000),
        })),
        1_000,
      );
      await db.batchInsert(
        'cancel_sessions',
        Array.from({ length: 5_000 }, (_, i) => ({
          workspace_id: workspace.workspaceId,
          customer_id: workspace.customerId,
          outcome: 'canceled',
          reason_code: 'other',
          monthly_mrr_cents: 100,
          currency: 'usd',
          created_at: new Date(base + i * 1000),
          ended_at: new Date(base + i * 1000),
        })),
        1_000,
      );
      // A workspace has a handful of tokens among the many of every workspace.
      await db.batchInsert(
        'api_tokens',
        Array.from({ length: workspace === g ? 100 : 5_000 }, (_, i) => ({
          workspace_id: workspace.workspaceId,
          name: `t${i}`,
          token_hash: hashApiToken(`sk_live_${workspace.workspaceId}_${i}`),
          token_hint: 'abcd',
          created_at: new Date(base + i * 1000),
        })),
        1_000,
      );
    }
    await db.raw('ANALYZE customers, cancel_sessions, api_tokens');
  });

  it('pages customers and cancel sessions by their (workspace, created_at DESC, id DESC) index, without sorting', async () => {
    const { db } = database.current;
    const customers = await planOf(db, 'customers', () =>
      listCustomers(db, g.workspaceId, { cursor: new Date(Date.UTC(2025, 0, 1, 1)) }),
    );
    expect(customers).toContain('customers_list_idx');
    expect(customers).not.toContain('"Sort"');
    const sessions = await planOf(db, 'cancel_sessions', () =>
      listCancelSessions(db, g.workspaceId, { cursor: new Date(Date.UTC(2025, 0, 1, 1)) }),
    );
    expect(sessions).toContain('cancel_sessions_list_idx');
    expect(sessions).not.toContain('"Sort"');
  });

  it('finds customers by email through lower(email) and by tag through the GIN index', async () => {
    const { db } = database.current;
    const { rows } = await db.raw<{ rows: Array<{ indexname: string; indexdef: string }> }>(
      "SELECT indexname, indexdef FROM pg_indexes WHERE indexname IN ('customers_email_idx', 'customers_tags_idx') ORDER BY 1",
    );
    expect(rows.map((row) => row.indexdef)).toEqual([
      expect.stringContaining('(workspace_id, lower(email))'),
      expect.stringContaining('USING gin (tags)'),
    ]);
    expect(await planOf(db, 'customers', () => listCustomers(db, g.workspaceId, { email: 'C42@Bulk.Test' }))).toContain(
      'customers_email_idx',
    );
    expect(await planOf(db, 'customers', () => listCustomers(db, g.workspaceId, { tag: 'Rare' }))).toContain(
      'customers_tags_idx',
    );
  });

  it("reads a page of a workspace's tokens, newest first, from the (workspace, created_at DESC, id DESC) index", async () => {
    const { db } = database.current;
    const plan = await planOf(db, 'api_tokens', () =>
      db('api_tokens')
        .where({ workspace_id: g.workspaceId })
        .orderBy([
          { column: 'created_at', order: 'desc' },
          { column: 'id', order: 'desc' },
        ])
        .limit(51),
    );
    expect(plan).toContain('api_tokens_list_idx');
    expect(plan).not.toContain('"Sort"');
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
