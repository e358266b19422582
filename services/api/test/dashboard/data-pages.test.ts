import { describe, expect, it } from '@jest/globals';
import { CAMPAIGN_SEARCH_CUSTOMER_IDS, listScope } from '@retention/db';
import { sealSecret } from '@retention/core';
import { createToken, recordCancelSession } from '@retention/domain';
import { testSecretsKeyBytes } from '@retention/testkit';
import { useApi } from '../harness.js';
import { dashboardClient, team, type DashboardCall } from './support.js';

/**
 * The data pages' lists and details over HTTP (docs/dashboard-api.md, "Data pages"): every
 * filter, keyset paging through groups of equal timestamps, cursors bound to their list and
 * filters, another workspace's ids, and what the details hold.
 */
const api = useApi();
const call: DashboardCall = (...args) => dashboardClient(api.current.url)(...args);
const db = () => api.current.db;

const T = (iso: string) => new Date(iso);
/** The instant seven campaigns (and five cancel sessions, and four customers) share. */
const TIE = '2026-05-10T12:00:00.000Z';

let counter = 0;
const unique = (prefix: string) => `${prefix}_${(counter += 1)}_${Math.random().toString(36).slice(2, 8)}`;

async function insertCustomer(workspaceId: string, fields: Record<string, unknown> = {}) {
  const [row] = await db()('customers')
    .insert({
      workspace_id: workspaceId,
      psp_customer_id: unique('cus'),
      email: `${unique('person')}@example.com`,
      ...fields,
    })
    .returning('*');
  return row as { id: string; email: string };
}

async function insertSubscription(workspaceId: string, customerId: string, fields: Record<string, unknown> = {}) {
  const [row] = await db()('subscriptions')
    .insert({
      workspace_id: workspaceId,
      customer_id: customerId,
      psp_subscription_id: unique('sub'),
      status: 'active',
      plan_name: 'Pro',
      amount_cents: 4900,
      currency: 'usd',
      interval: 'month',
      ...fields,
    })
    .returning('*');
  return row as { id: string };
}

type CampaignFields = {
  status?: 'in_flight' | 'recovered' | 'lost' | 'abandoned';
  decline_category?: string;
  first_failed_at: string;
  psp_invoice_id?: string;
};

async function insertCampaign(
  workspaceId: string,
  customer: { id: string },
  subscription: { id: string },
  fields: CampaignFields,
) {
  const status = fields.status ?? 'in_flight';
  const failed = T(fields.first_failed_at);
  const closed = new Date(failed.getTime() + 3_600_000);
  const [row] = await db()('recovery_campaigns')
    .insert({
      workspace_id: workspaceId,
      customer_id: customer.id,
      subscription_id: subscription.id,
      psp_invoice_id: fields.psp_invoice_id ?? unique('in'),
      amount_cents: 1000,
      currency: 'usd',
      status,
      decline_code: 'generic_decline',
      decline_category: fields.decline_category ?? 'soft',
      recovered_via: status === 'recovered' ? 'retry' : null,
      first_failed_at: failed,
      recovered_at: status === 'recovered' ? closed : null,
      closed_at: status === 'in_flight' ? null : closed,
    })
    .returning('id');
  return (row as { id: string }).id;
}

async function insertCancelSession(
  workspaceId: string,
  customer: { id: string },
  fields: { outcome?: string; reason_code?: string; created_at: string; subscription_id?: string; feedback?: string },
) {
  const at = T(fields.created_at);
  const [row] = await db()('cancel_sessions')
    .insert({
      workspace_id: workspaceId,
      customer_id: customer.id,
      subscription_id: fields.subscription_id ?? null,
      outcome: fields.outcome ?? 'canceled',
      reason_code: fields.reason_code ?? 'too_expensive',
      feedback: fields.feedback ?? null,
      monthly_mrr_cents: 4900,
      currency: 'usd',
      created_at: at,
      ended_at: at,
    })
    .returning('id');
  return (row as { id: string }).id;
}

/**
 * A workspace with its team and:
 * - alice (`Alice@Example.com`, tag vip) with two subscriptions; bob; carol;
 * - 12 campaigns: seven share TIE (alternating soft / card_update_required, two lost), one
 *   each at 2026-05-01, 2026-05-10T11:59:59.999, 2026-05-10T12:00:00.001, 2026-05-20 and an
 *   invoice `in_findme` (bob's) at 2026-04-01;
 * - 8 cancel sessions: five share TIE (canceled / saved_pause, two reasons), three others.
 */
async function world(name = 'Data') {
  const people = await team(db(), call, name);
  const ws = people.workspace.id;
  const alice = await insertCustomer(ws, {
    email: `Alice.${unique('a')}@Example.com`,
    tags: ['vip'],
    created_at: T(TIE),
  });
  const bob = await insertCustomer(ws, { created_at: T(TIE) });
  const carol = await insertCustomer(ws, { created_at: T(TIE) });
  const dave = await insertCustomer(ws, { created_at: T(TIE), tags: ['vip'] });
  const older = await insertCustomer(ws, { created_at: T('2026-01-01T00:00:00Z') });
  const aliceOld = await insertSubscription(ws, alice.id, {
    created_at: T('2026-01-01T00:00:00Z'),
    status: 'canceled',
  });
  const aliceNew = await insertSubscription(ws, alice.id, { created_at: T('2026-03-01T00:00:00Z') });
  const bobSub = await insertSubscription(ws, bob.id);
  const campaigns: string[] = [];
  for (let i = 0; i < 7; i += 1) {
    campaigns.push(
      await insertCampaign(ws, i % 2 ? bob : alice, i % 2 ? bobSub : aliceNew, {
        first_failed_at: TIE,
        decline_category: i % 2 ? 'card_update_required' : 'soft',
        status: i < 2 ? 'lost' : 'in_flight',
      }),
    );
  }
  for (const at of [
    '2026-05-01T00:00:00.000Z',
    '2026-05-10T11:59:59.999Z',
    '2026-05-10T12:00:00.001Z',
    '2026-05-20T00:00:00.000Z',
  ]) {
    campaigns.push(await insertCampaign(ws, alice, aliceNew, { first_failed_at: at, status: 'recovered' }));
  }
  const invoice = unique('in_findme');
  const findme = await insertCampaign(ws, bob, bobSub, {
    first_failed_at: '2026-04-01T00:00:00Z',
    psp_invoice_id: invoice,
  });
  campaigns.push(findme);
  const sessions: string[] = [];
  for (let i = 0; i < 5; i += 1) {
    sessions.push(
      await insertCancelSession(ws, i % 2 ? carol : alice, {
        created_at: TIE,
        outcome: i % 2 ? 'saved_pause' : 'canceled',
        reason_code: i < 3 ? 'too_expensive' : 'unused',
      }),
    );
  }
  for (const at of ['2026-05-01T00:00:00Z', '2026-05-10T12:00:00.001Z', '2026-06-01T00:00:00Z']) {
    sessions.push(
      await insertCancelSession(ws, bob, { created_at: at, subscription_id: bobSub.id, feedback: 'too pricey' }),
    );
  }
  return {
    ...people,
    ws,
    alice,
    bob,
    carol,
    dave,
    older,
    aliceOld,
    aliceNew,
    bobSub,
    campaigns,
    findme,
    invoice,
    sessions,
  };
}

/** Every row of a list, page by page with `limit`, following next_cursor. */
async function walk(path: string, cookie: string, limit: number): Promise<Array<Record<string, any>>> {
  const rows: Array<Record<string, any>> = [];
  let cursor: string | null = null;
  for (let pages = 0; pages < 100; pages += 1) {
    const separator = path.includes('?') ? '&' : '?';
    const url = `${path}${separator}limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
    const reply = await call('GET', url, { cookie });
    expect([url, reply.status]).toEqual([url, 200]);
    expect(reply.body.object).toBe('list');
    expect(reply.body.data.length).toBeLessThanOrEqual(limit);
    rows.push(...reply.body.data);
    if (!reply.body.has_more) {
      expect(reply.body.next_cursor).toBeNull();
      return rows;
    }
    expect(reply.body.data).toHaveLength(limit);
    cursor = reply.body.next_cursor;
  }
  throw new Error('more than 100 pages');
}

/** The ids of `table` rows of the workspace, ordered as the lists order them. */
async function expectedIds(table: string, column: string, where: Record<string, unknown>) {
  return (await db()(table)
    .where(where)
    .orderBy([
      { column, order: 'desc' },
      { column: 'id', order: 'desc' },
    ])
    .pluck('id')) as string[];
}

const ids = (rows: Array<Record<string, any>>) => rows.map((row) => row.id as string);
/** The first column (the id) of each row of a CSV export, its header row left out. */
const exportedIds = (csv: string) =>
  csv
    .trimEnd()
    .split('\n')
    .slice(1)
    .map((line) => line.split(',')[0]);

describe('GET /dashboard/api/campaigns', () => {
  it('pages through a group of equal first_failed_at with a small limit: every row once, newest first', async () => {
    const w = await world();
    const all = await expectedIds('recovery_campaigns', 'first_failed_at', { workspace_id: w.ws });
    expect(all).toHaveLength(12);
    for (const limit of [1, 2, 3, 5]) {
      const rows = await walk('/campaigns', w.member.cookie, limit);
      expect(ids(rows)).toEqual(all);
    }
    // Filtered, the group splits across pages too.
    const soft = await expectedIds('recovery_campaigns', 'first_failed_at', {
      workspace_id: w.ws,
      decline_category: 'soft',
      status: 'in_flight',
    });
    expect(ids(await walk('/campaigns?decline_category=soft&status=in_flight', w.member.cookie, 2))).toEqual(soft);
  });

  it('rows are the API campaign plus customer_email, newest first, limit 50 by default', async () => {
    const w = await world();
    const reply = await call('GET', '/campaigns', { cookie: w.member.cookie });
    expect(reply.status).toBe(200);
    expect(reply.body).toMatchObject({ object: 'list', has_more: false, next_cursor: null });
    expect(reply.body.data).toHaveLength(12);
    expect(reply.body.data[0].first_failed_at).toBe('2026-05-20T00:00:00.000Z');
    const { token } = await createToken(db(), { workspace_id: w.ws, name: 'compare' });
    for (const row of reply.body.data.slice(0, 3)) {
      const fromApi = await api.current.get(`/api/v1/campaigns/${row.id}`, token);
      const { customer, subscription: _subscription, ...campaign } = fromApi.body;
      expect(row).toEqual({ ...campaign, customer_email: customer.email });
    }
    expect(Object.keys(reply.body.data[0])).toEqual([
      'id',
      'object',
      'psp_invoice_id',
      'amount_cents',
      'currency',
      'status',
      'decline_code',
      'decline_category',
      'recovered_via',
      'first_failed_at',
      'recovered_at',
      'closed_at',
      'customer_id',
      'subscription_id',
      'customer_email',
    ]);
  });

  it('filters by status and decline_category', async () => {
    const w = await world();
    const lost = await call('GET', '/campaigns?status=lost', { cookie: w.member.cookie });
    expect(ids(lost.body.data)).toEqual(
      await expectedIds('recovery_campaigns', 'first_failed_at', { workspace_id: w.ws, status: 'lost' }),
    );
    expect(lost.body.data).toHaveLength(2);
    const card = await call('GET', '/campaigns?decline_category=card_update_required', { cookie: w.member.cookie });
    expect(card.body.data).toHaveLength(3);
    expect(card.body.data.every((row: any) => row.decline_category === 'card_update_required')).toBe(true);
    const both = await call('GET', '/campaigns?status=lost&decline_category=card_update_required', {
      cookie: w.member.cookie,
    });
    expect(both.body.data).toHaveLength(1);
    expect(both.body.data[0]).toMatchObject({ status: 'lost', decline_category: 'card_update_required' });
    const none = await call('GET', '/campaigns?decline_category=fraud', { cookie: w.member.cookie });
    expect(none.body).toEqual({
      object: 'list',
      data: [],
      has_more: false,
      next_cursor: null,
      total: 0,
      total_capped: false,
    });
  });

  it('from is inclusive and to exclusive, on first_failed_at', async () => {
    const w = await world();
    const at = async (query: string) =>
      (await call('GET', `/campaigns?${query}`, { cookie: w.member.cookie })).body.data.map(
        (row: any) => row.first_failed_at,
      );
    const from = await at(`from=${encodeURIComponent(TIE)}`);
    expect(from).toEqual(['2026-05-20T00:00:00.000Z', '2026-05-10T12:00:00.001Z', ...Array(7).fill(TIE)]);
    const to = await at(`to=${encodeURIComponent(TIE)}`);
    expect(to).toEqual(['2026-05-10T11:59:59.999Z', '2026-05-01T00:00:00.000Z', '2026-04-01T00:00:00.000Z']);
    const window = await at(`from=2026-05-01&to=${encodeURIComponent('2026-05-10T12:00:00.001Z')}`);
    expect(window).toEqual([...Array(7).fill(TIE), '2026-05-10T11:59:59.999Z', '2026-05-01T00:00:00.000Z']);
    // Paged with a cursor, the bounds hold on every page.
    const paged = await walk(
      `/campaigns?from=2026-05-01&to=${encodeURIComponent('2026-05-10T12:00:00.001Z')}`,
      w.member.cookie,
      2,
    );
    expect(paged.map((row) => row.first_failed_at)).toEqual(window);
    expect((await call('GET', '/campaigns?from=yesterday', { cookie: w.member.cookie })).status).toBe(400);
    // An impossible date is refused, not rolled over into March (the API's reading of a timestamp).
    const impossible = await call('GET', '/campaigns?to=2026-02-30', { cookie: w.member.cookie });
    expect(impossible.status).toBe(400);
    expect(impossible.body.error).toMatchObject({ type: 'invalid_param', message: expect.stringMatching(/^to:/) });
  });

  it('q finds an exact invoice id, or the campaigns of customers whose email or name holds it, any case', async () => {
    const w = await world();
    const byInvoice = await call('GET', `/campaigns?q=${encodeURIComponent(w.invoice)}`, { cookie: w.member.cookie });
    expect(ids(byInvoice.body.data)).toEqual([w.findme]);
    expect(byInvoice.body.data[0].customer_email).toBe(w.bob.email);
    const alices = await expectedIds('recovery_campaigns', 'first_failed_at', {
      workspace_id: w.ws,
      customer_id: w.alice.id,
    });
    expect(alices).toHaveLength(8);
    // The whole email in another case, as before, and now a part of it.
    for (const q of [w.alice.email.toUpperCase(), w.alice.email.slice(3, -6).toUpperCase()]) {
      const byEmail = await call('GET', `/campaigns?q=${encodeURIComponent(q)}`, { cookie: w.member.cookie });
      expect([q, ids(byEmail.body.data)]).toEqual([q, alices]);
      expect(byEmail.body.data.every((row: any) => row.customer_email === w.alice.email)).toBe(true);
    }
    // Part of a name: bob is Robert Tables.
    await db()('customers').where({ id: w.bob.id }).update({ name: 'Robert Tables' });
    const bobs = await expectedIds('recovery_campaigns', 'first_failed_at', {
      workspace_id: w.ws,
      customer_id: w.bob.id,
    });
    const byName = await walk('/campaigns?q=bert%20TAB', w.member.cookie, 2);
    expect(ids(byName)).toEqual(bobs);
    // The count route counts the same search (here by the matched customers' ids, with no join).
    const counted = await call('GET', '/campaigns/count?q=bert%20TAB', { cookie: w.member.cookie });
    expect(counted.body).toEqual({ object: 'list_count', total: bobs.length, total_capped: false });
    // Paged, with another filter.
    const lostAlice = await walk(`/campaigns?status=lost&q=${encodeURIComponent(w.alice.email)}`, w.member.cookie, 1);
    expect(lostAlice.map((row) => [row.status, row.customer_id])).toEqual([['lost', w.alice.id]]);
    // The start of an invoice id finds it too: `in_` and 4 characters or more.
    for (const start of [w.invoice.slice(0, -1), w.invoice.slice(0, 7)]) {
      const partial = await call('GET', `/campaigns?q=${encodeURIComponent(start)}`, { cookie: w.member.cookie });
      expect([start, ids(partial.body.data)]).toEqual([start, [w.findme]]);
    }
    // Shorter, or not from its start, it is matched whole only.
    for (const part of [w.invoice.slice(0, 6), w.invoice.slice(1)]) {
      const partial = await call('GET', `/campaigns?q=${encodeURIComponent(part)}`, { cookie: w.member.cookie });
      expect([part, partial.body.data]).toEqual([part, []]);
    }
    // The export finds the same rows.
    const csv = await call('GET', '/campaigns/export.csv?q=bert%20TAB', { cookie: w.member.cookie });
    expect(exportedIds(csv.text)).toEqual(bobs);
  });

  it('q that starts an invoice id (`in_` and 4 characters or more) finds every invoice starting so, % and _ literally, case kept', async () => {
    const w = await world();
    const tag = unique('p').replace(/_/g, '').toLowerCase();
    const invoice = (id: string) =>
      insertCampaign(w.ws, w.bob, w.bobSub, { first_failed_at: '2026-03-01T00:00:00Z', psp_invoice_id: id });
    const plain = [await invoice(`in_${tag}A1`), await invoice(`in_${tag}A2`)];
    const percent = await invoice(`in_${tag}%9`);
    const notPercent = await invoice(`in_${tag}x9`);
    const underscore = await invoice(`in_${tag}_7`);
    const notUnderscore = await invoice(`in_${tag}y7`);
    const upper = await invoice(`in_${tag.toUpperCase()}A3`);
    const found = async (q: string) => {
      const reply = await call('GET', `/campaigns?q=${encodeURIComponent(q)}`, { cookie: w.member.cookie });
      expect([q, reply.status]).toEqual([q, 200]);
      return ids(reply.body.data).sort();
    };
    expect(await found(`in_${tag}A`)).toEqual([...plain].sort());
    // Ids are case-sensitive: the start as typed, as the whole id is.
    expect(await found(`in_${tag.toUpperCase()}A`)).toEqual([upper]);
    // % and _ are characters of the id here, not LIKE's wildcards.
    expect(await found(`in_${tag}%`)).toEqual([percent]);
    expect(await found(`in_${tag}_`)).toEqual([underscore]);
    expect(await found(`in_${tag}`)).toEqual([...plain, percent, notPercent, underscore, notUnderscore].sort());
    // Paged, counted and exported as listed.
    const listed = ids(await walk(`/campaigns?q=${encodeURIComponent(`in_${tag}`)}`, w.member.cookie, 2));
    expect(listed).toHaveLength(6);
    const counted = await call('GET', `/campaigns/count?q=${encodeURIComponent(`in_${tag}`)}`, {
      cookie: w.member.cookie,
    });
    expect(counted.body).toEqual({ object: 'list_count', total: 6, total_capped: false });
    const csv = await call('GET', `/campaigns/export.csv?q=${encodeURIComponent(`in_${tag}`)}`, {
      cookie: w.member.cookie,
    });
    expect(exportedIds(csv.text)).toEqual(listed);
  });

  it('q matching more customers than are looked up by id walks the list and still finds exactly their campaigns', async () => {
    const w = await world();
    const domain = `${unique('many')}.test`;
    const matching = CAMPAIGN_SEARCH_CUSTOMER_IDS + 1;
    await db().batchInsert(
      'customers',
      Array.from({ length: matching }, (_, i) => ({
        workspace_id: w.ws,
        psp_customer_id: unique('cus'),
        email: `shopper${i}@${domain}`,
      })),
      500,
    );
    const [first, last] = await Promise.all(
      [`shopper0@${domain}`, `shopper${matching - 1}@${domain}`].map(
        (email) => db()('customers').where({ workspace_id: w.ws, email }).first() as Promise<{ id: string }>,
      ),
    );
    const expected: string[] = [];
    for (const [n, customer] of [first!, last!].entries()) {
      const subscription = await insertSubscription(w.ws, customer.id);
      expected.push(
        await insertCampaign(w.ws, customer, subscription, { first_failed_at: `2026-0${n + 2}-01T00:00:00Z` }),
      );
    }
    const rows = await walk(`/campaigns?q=${encodeURIComponent(`@${domain}`)}`, w.member.cookie, 1);
    expect(ids(rows)).toEqual(expected.reverse());
    // Counted as listed: the search tested on each campaign's customer, so the count joins them.
    const counted = await call('GET', `/campaigns/count?q=${encodeURIComponent(`@${domain}`)}`, {
      cookie: w.member.cookie,
    });
    expect(counted.body).toEqual({ object: 'list_count', total: 2, total_capped: false });
  });

  it('the CSV export holds exactly the rows the list pages through, for the same filters', async () => {
    const w = await world();
    const query = `status=in_flight&from=2026-04-01&to=${encodeURIComponent('2026-05-10T12:00:00.001Z')}`;
    const listed = ids(await walk(`/campaigns?${query}`, w.member.cookie, 3));
    const csv = await call('GET', `/campaigns/export.csv?${query}`, { cookie: w.member.cookie });
    expect(csv.status).toBe(200);
    const exported = exportedIds(csv.text);
    expect(exported).toEqual(listed);
    expect(listed).toHaveLength(6);
    // The export takes no page size.
    expect((await call('GET', '/campaigns/export.csv?limit=2', { cookie: w.member.cookie })).status).toBe(400);
  });
});

describe('bad list requests are 400 invalid_param, never a 500', () => {
  it('refuses unknown parameters, bad values and limits, and a cursor of another list or filter set', async () => {
    const w = await world();
    const cookie = w.member.cookie;
    const refused = async (path: string, message: RegExp) => {
      const reply = await call('GET', path, { cookie });
      expect([path, reply.status, reply.body?.error?.type]).toEqual([path, 400, 'invalid_param']);
      expect(reply.body.error.message).toMatch(message);
    };
    await refused('/campaigns?stauts=lost', /stauts: is not a parameter of this list/);
    await refused('/customers?outcome=canceled', /outcome: is not a parameter/);
    await refused('/cancel_sessions?status=lost', /status: is not a parameter/);
    await refused('/campaigns?status=lost&status=recovered', /status: give it once/);
    await refused('/campaigns?status=won', /status: must be one of/);
    await refused('/campaigns?decline_category=', /decline_category: must be one of/);
    await refused('/cancel_sessions?outcome=gone', /outcome: must be one of/);
    await refused('/cancel_sessions?reason_code=bored', /reason_code: must be one of/);
    await refused('/cancel_sessions?from=yesterday', /^from: must be an ISO 8601 date or timestamp$/);
    await refused('/cancel_sessions?to=2026-02-30', /^to: must be an ISO 8601 date or timestamp$/);
    await refused('/cancel_sessions/count?from=2026-13-01', /^from: must be an ISO 8601/);
    await refused('/cancel_sessions/export.csv?to=soon', /^to: must be an ISO 8601/);
    await refused('/cancel_sessions?q=%20ab%20', /^q: Type at least 3 characters to search\.$/);
    await refused('/cancel_sessions/count?q=a', /^q: Type at least 3 characters to search\.$/);
    await refused('/cancel_sessions/export.csv?q=', /^q: Type at least 3 characters to search\.$/);
    await refused(`/cancel_sessions?q=${'x'.repeat(321)}`, /q: must be at most 320 characters/);
    await refused('/cancel_sessions?q=ab%00c', /q: must not contain control characters/);
    await refused('/cancel_sessions?tz=UTC', /tz: is not a parameter of this list/);
    await refused('/campaigns?q=', /^q: Type at least 3 characters to search\.$/);
    await refused('/campaigns?q=in', /^q: Type at least 3 characters to search\.$/);
    await refused(`/campaigns?q=${'x'.repeat(321)}`, /q: must be at most 320 characters/);
    await refused('/campaigns?q=%00', /q: must not contain control characters/);
    await refused('/customers?email=a%00b', /email: must not contain control characters/);
    await refused(`/customers?tag=${'t'.repeat(101)}`, /tag: must be 1 to 100/);
    for (const limit of ['0', '101', '-1', '2.5', 'ten', '', '0050']) {
      await refused(`/campaigns?limit=${limit}`, /limit: must be an integer from 1 to 100/);
    }
    await refused('/campaigns?cursor=', /cursor: must be a next_cursor/);
    await refused('/campaigns?cursor=2026-05-10T12:00:00Z', /cursor: must be a next_cursor/);
    await refused('/campaigns?cursor=%F0%9F%92%A9', /cursor: must be a next_cursor/);
    await refused(`/campaigns?cursor=${'A'.repeat(400)}`, /cursor: must be a next_cursor/);

    const first = await call('GET', '/campaigns?status=in_flight&limit=2', { cookie });
    const cursor = encodeURIComponent(first.body.next_cursor);
    expect((await call('GET', `/campaigns?status=in_flight&limit=3&cursor=${cursor}`, { cookie })).status).toBe(200);
    await refused(
      `/campaigns?status=lost&cursor=${cursor}`,
      /cursor: comes from another list, other filters or another sort/,
    );
    await refused(`/campaigns?cursor=${cursor}`, /cursor: comes from another list, other filters or another sort/);
    await refused(`/campaigns?status=in_flight&q=xyz&cursor=${cursor}`, /another list, other filters or another sort/);
    await refused(`/cancel_sessions?cursor=${cursor}`, /another list, other filters or another sort/);
    const sessions = await call('GET', '/cancel_sessions?limit=1', { cookie });
    // A cancel sessions cursor is its filters': not another search's, nor another range's.
    const sessionCursor = encodeURIComponent(sessions.body.next_cursor);
    await refused(`/cancel_sessions?q=example&cursor=${sessionCursor}`, /another list, other filters or another sort/);
    await refused(
      `/cancel_sessions?from=2026-01-01&cursor=${sessionCursor}`,
      /another list, other filters or another sort/,
    );
    await refused(
      `/cancel_sessions?to=2027-01-01&cursor=${sessionCursor}`,
      /another list, other filters or another sort/,
    );
    const searched = await call('GET', '/cancel_sessions?q=example&from=2026-01-01&limit=1', { cookie });
    const searchedCursor = encodeURIComponent(searched.body.next_cursor);
    expect(
      (await call('GET', `/cancel_sessions?q=example&from=2026-01-01&limit=1&cursor=${searchedCursor}`, { cookie }))
        .status,
    ).toBe(200);
    await refused(`/cancel_sessions?q=example&cursor=${searchedCursor}`, /another list, other filters or another sort/);
    await refused(
      `/cancel_sessions?q=exampl&from=2026-01-01&cursor=${searchedCursor}`,
      /another list, other filters or another sort/,
    );
    await refused(
      `/customers?cursor=${encodeURIComponent(sessions.body.next_cursor)}`,
      /another list, other filters or another sort/,
    );
    const customers = await call('GET', '/customers?limit=1', { cookie });
    await refused(
      `/customers?tag=vip&cursor=${encodeURIComponent(customers.body.next_cursor)}`,
      /another list, other filters or another sort/,
    );
    // The security log's cursors (no scope) are not the lists' either.
    const [event] = await db()('security_events').where({ workspace_id: w.ws }).select('created_at', 'id');
    const unscoped = Buffer.from(`${(event?.created_at ?? new Date()).toISOString()}|${w.campaigns[0]}`).toString(
      'base64url',
    );
    await refused(`/campaigns?cursor=${unscoped}`, /another list, other filters or another sort/);
  });
});

describe('odd values are answered, never a 500', () => {
  it('dates at the edges, encodings, crafted cursors', async () => {
    const w = await world();
    const cookie = w.member.cookie;
    const crafted = (at: string, scope = listScope('campaigns', {})) =>
      encodeURIComponent(Buffer.from(`${at}|${w.campaigns[0]}|${scope}`).toString('base64url'));
    const paths = [
      '/campaigns?from=0000-01-01',
      '/campaigns?to=9999-12-31T23:59:59.999Z',
      '/campaigns?from=2026-01-01T00:00:00%2B14:00&to=2025-01-01',
      '/campaigns?from=2026-02-30',
      '/campaigns?from=2026-01-01T25:00:00Z',
      '/campaigns?q=%ED%A0%80',
      '/campaigns?q=%F0%9F%92%A9%40example.com',
      `/campaigns?q=${'x'.repeat(320)}`,
      '/campaigns?q=%',
      '/campaigns?limit=1e2',
      '/campaigns?limit=%31%30',
      `/campaigns?cursor=${crafted('-271821-04-20T00:00:00.000Z')}`,
      `/campaigns?cursor=${crafted('+275760-09-13T00:00:00.000Z')}`,
      `/campaigns?cursor=${crafted('2026-05-10T12:00:00Z')}`,
      `/campaigns?cursor=${crafted('2026-02-30T00:00:00.000Z')}`,
      `/campaigns?cursor=${crafted('0000-01-01T00:00:00.000Z')}`,
      '/customers?email=%25&tag=%20%20',
      '/customers?tag=%C3%A9t%C3%A9',
      '/cancel_sessions?outcome=canceled&reason_code=unused&limit=100',
      '/customers/%20',
      '/cancel_sessions/export.csv',
    ];
    for (const path of paths) {
      const reply = await call('GET', path, { cookie });
      expect([path, reply.status < 500]).toEqual([path, true]);
      if (reply.status !== 200) expect([path, reply.body?.error?.type]).toEqual([path, expect.any(String)]);
    }
    // A cursor is exactly what the list wrote: a date it would not write is refused.
    const notWritten = await call('GET', `/campaigns?cursor=${crafted('-271821-04-20T00:00:00.000Z')}`, { cookie });
    expect([notWritten.status, notWritten.body.error.message]).toEqual([400, expect.stringMatching(/next_cursor/)]);
    const written = await call('GET', `/campaigns?cursor=${crafted('2026-05-10T12:00:00.000Z')}`, { cookie });
    expect(written.status).toBe(200);
  });
});

describe('GET /dashboard/api/customers', () => {
  it('pages through equal created_at, filters by exact email (any case) and by tag', async () => {
    const w = await world();
    const all = await expectedIds('customers', 'created_at', { workspace_id: w.ws });
    expect(all).toHaveLength(5);
    expect(ids(await walk('/customers', w.member.cookie, 2))).toEqual(all);
    expect(ids(await walk('/customers', w.member.cookie, 1))).toEqual(all);
    const byEmail = await call('GET', `/customers?email=${encodeURIComponent(w.alice.email.toLowerCase())}`, {
      cookie: w.member.cookie,
    });
    expect(ids(byEmail.body.data)).toEqual([w.alice.id]);
    expect(byEmail.body.data[0]).toEqual({
      id: w.alice.id,
      object: 'customer',
      psp_customer_id: expect.any(String),
      email: w.alice.email,
      name: null,
      tags: ['vip'],
      created_at: TIE,
    });
    const vip = await walk('/customers?tag=VIP', w.member.cookie, 1);
    expect(ids(vip).sort()).toEqual([w.alice.id, w.dave.id].sort());
    expect(ids(vip)).toEqual(
      (await expectedIds('customers', 'created_at', { workspace_id: w.ws })).filter((id) =>
        [w.alice.id, w.dave.id].includes(id),
      ),
    );
    const nobody = await call('GET', '/customers?email=alice', { cookie: w.member.cookie });
    expect(nobody.body.data).toEqual([]);
  });

  it('q that is a whole email address finds that address only, in any case, on customers and campaigns', async () => {
    const w = await world();
    const tag = unique('w').toLowerCase();
    const ann = await insertCustomer(w.ws, { email: `ann.${tag}@example.test` });
    // Holds Ann's whole address inside its own: found by part of it, not by her address.
    const joann = await insertCustomer(w.ws, { email: `joann.${tag}@example.test.org` });
    const campaignOf = async (customer: { id: string }) =>
      insertCampaign(w.ws, customer, await insertSubscription(w.ws, customer.id), {
        first_failed_at: '2026-03-01T00:00:00.000Z',
      });
    const annCampaign = await campaignOf(ann);
    await campaignOf(joann);
    const found = async (path: string) => {
      const reply = await call('GET', path, { cookie: w.member.cookie });
      expect([path, reply.status]).toEqual([path, 200]);
      return ids(reply.body.data).sort();
    };
    const address = encodeURIComponent(`ANN.${tag}@Example.test`);
    expect(await found(`/customers?q=${address}`)).toEqual([ann.id]);
    expect(await found(`/campaigns?q=${address}`)).toEqual([annCampaign]);
    expect(await found(`/customers?q=${encodeURIComponent(`ann.${tag}@example`)}`)).toEqual([ann.id, joann.id].sort());
  });

  it('q finds part of an email or a name, in any case, with %, _ and \\ taken literally', async () => {
    const w = await world();
    const tag = unique('s').toLowerCase();
    const jane = await insertCustomer(w.ws, { email: `jd.${tag}@Acme-Mail.test`, name: 'Jane Doe' });
    const sale = await insertCustomer(w.ws, { email: `sale.${tag}@shop.test`, name: '100% Cotton' });
    const notSale = await insertCustomer(w.ws, { email: `plain.${tag}@shop.test`, name: '1000 Cotton' });
    const under = await insertCustomer(w.ws, { email: `a_b.${tag}@shop.test` });
    const notUnder = await insertCustomer(w.ws, { email: `axb.${tag}@shop.test` });
    const slash = await insertCustomer(w.ws, { email: `slash.${tag}@shop.test`, name: 'Back\\Slash' });
    const found = async (q: string) => {
      const reply = await call('GET', `/customers?q=${encodeURIComponent(q)}`, { cookie: w.member.cookie });
      expect([q, reply.status]).toEqual([q, 200]);
      return ids(reply.body.data).sort();
    };
    expect(await found('jane do')).toEqual([jane.id]);
    expect(await found('  JANE DOE ')).toEqual([jane.id]);
    expect(await found('acme-mail.TE')).toEqual([jane.id]);
    expect(await found(`jd.${tag.toUpperCase()}`)).toEqual([jane.id]);
    expect(await found('lice.')).toEqual([w.alice.id]);
    // % and _ are characters here, not LIKE's wildcards; so is LIKE's escape character.
    expect(await found('0% c')).toEqual([sale.id]);
    expect(await found(`a_b.${tag}`)).toEqual([under.id]);
    expect(await found('k\\s')).toEqual([slash.id]);
    expect(await found('k\\\\s')).toEqual([]);
    expect(await found('nobody by this name')).toEqual([]);
    expect([notSale.id, notUnder.id]).toHaveLength(2);
    // With another filter, and paged.
    await db()('customers')
      .where({ id: jane.id })
      .update({ tags: ['vip'] });
    expect(ids(await walk('/customers?tag=vip&q=doe', w.member.cookie, 1))).toEqual([jane.id]);
    // The export finds the same rows.
    const csv = await call('GET', '/customers/export.csv?q=COTTON', { cookie: w.member.cookie });
    expect(csv.status).toBe(200);
    const exported = exportedIds(csv.text);
    expect(exported.sort()).toEqual([sale.id, notSale.id].sort());
  });

  it('q finds a name and an address as people paste them: words in any order, commas, angle brackets', async () => {
    const w = await world();
    const tag = unique('p').toLowerCase();
    const oliver = await insertCustomer(w.ws, { email: `oh.${tag}@example.test`, name: `Oliver Hughes${tag}` });
    const olivia = await insertCustomer(w.ws, { email: `ol.${tag}@example.test`, name: `Olivia Hughes${tag}` });
    const oliverCampaign = await insertCampaign(w.ws, oliver, await insertSubscription(w.ws, oliver.id), {
      first_failed_at: '2026-03-01T00:00:00.000Z',
    });
    const found = async (path: string) => {
      const reply = await call('GET', path, { cookie: w.member.cookie });
      expect([path, reply.status]).toEqual([path, 200]);
      return ids(reply.body.data).sort();
    };
    const customers = (q: string) => found(`/customers?q=${encodeURIComponent(q)}`);
    expect(await customers(`Hughes${tag} Oliver`)).toEqual([oliver.id]);
    expect(await customers(`Hughes${tag}, Oliver`)).toEqual([oliver.id]);
    expect(await customers(`oliver   hughes${tag}`)).toEqual([oliver.id]);
    expect(await customers(`"Oliver Hughes${tag}"`)).toEqual([oliver.id]);
    expect(await customers(`Hughes${tag} Oli`)).toEqual([oliver.id, olivia.id].sort());
    // An address as a mail client copies it: that address only, whatever the name beside it says.
    expect(await customers(`<OH.${tag}@example.test>`)).toEqual([oliver.id]);
    expect(await customers(`Olivia Hughes${tag} <oh.${tag}@example.test>`)).toEqual([oliver.id]);
    expect(await found(`/campaigns?q=${encodeURIComponent(`Hughes${tag}, Oliver`)}`)).toEqual([oliverCampaign]);
    // Every word must be found.
    expect(await customers(`Oliver Hughes${tag} Smith`)).toEqual([]);
  });

  it('q under 3 characters (trimmed) is refused at q with a sentence a page can show', async () => {
    const w = await world();
    for (const path of [
      '/customers?q=ja',
      '/customers?q=%20%20j%20',
      '/customers?q=',
      '/customers/export.csv?q=ab',
      '/campaigns?q=%20ab%20',
      '/campaigns/export.csv?q=a',
    ]) {
      const reply = await call('GET', path, { cookie: w.member.cookie });
      expect([path, reply.status, reply.body?.error]).toEqual([
        path,
        400,
        { type: 'invalid_param', message: 'q: Type at least 3 characters to search.', param: 'q' },
      ]);
    }
  });

  it("q never finds another workspace's customers, nor their campaigns", async () => {
    const w = await world('Searching');
    const other = await world('Other');
    const tag = unique('iso').toLowerCase();
    const ours = await insertCustomer(w.ws, { email: `ours.${tag}@example.com`, name: `Jane ${tag}` });
    const theirs = await insertCustomer(other.ws, { email: `theirs.${tag}@example.com`, name: `Jane ${tag}` });
    const theirSub = await insertSubscription(other.ws, theirs.id);
    await insertCampaign(other.ws, theirs, theirSub, { first_failed_at: '2026-05-01T00:00:00Z' });
    const search = async (cookie: string, path: string) => ids((await call('GET', path, { cookie })).body.data);
    expect(await search(w.member.cookie, `/customers?q=jane%20${tag}`)).toEqual([ours.id]);
    expect(await search(other.member.cookie, `/customers?q=jane%20${tag}`)).toEqual([theirs.id]);
    expect(await search(w.member.cookie, `/customers?q=theirs.${tag}`)).toEqual([]);
    expect(await search(w.member.cookie, `/campaigns?q=theirs.${tag}`)).toEqual([]);
    const csv = await call('GET', `/customers/export.csv?q=${tag}`, { cookie: w.member.cookie });
    expect(exportedIds(csv.text)).toEqual([ours.id]);
  });

  it('the CSV export holds exactly the rows the list pages through, for the same filters', async () => {
    const w = await world();
    for (const query of ['', 'tag=VIP', `email=${encodeURIComponent(w.alice.email.toUpperCase())}`]) {
      const listed = ids(await walk(`/customers?${query}`, w.member.cookie, 1));
      const csv = await call('GET', `/customers/export.csv?${query}`, { cookie: w.member.cookie });
      expect([query, csv.status]).toEqual([query, 200]);
      const exported = exportedIds(csv.text);
      expect([query, exported]).toEqual([query, listed]);
      expect(listed.length).toBeGreaterThan(0);
    }
  });
});

describe('GET /dashboard/api/cancel_sessions', () => {
  it('pages through equal created_at, filters by outcome and reason_code, rows carry customer_email', async () => {
    const w = await world();
    const all = await expectedIds('cancel_sessions', 'created_at', { workspace_id: w.ws });
    expect(all).toHaveLength(8);
    for (const limit of [1, 2, 3]) expect(ids(await walk('/cancel_sessions', w.member.cookie, limit))).toEqual(all);
    const paused = await walk('/cancel_sessions?outcome=saved_pause', w.member.cookie, 1);
    expect(ids(paused)).toEqual(
      await expectedIds('cancel_sessions', 'created_at', { workspace_id: w.ws, outcome: 'saved_pause' }),
    );
    expect(paused).toHaveLength(2);
    expect(paused.every((row) => row.customer_email === w.carol.email)).toBe(true);
    const unused = await call('GET', '/cancel_sessions?reason_code=unused&outcome=canceled', {
      cookie: w.member.cookie,
    });
    expect(unused.body.data).toHaveLength(1);
    expect(unused.body.data[0]).toMatchObject({
      outcome: 'canceled',
      reason_code: 'unused',
      customer_email: w.alice.email,
    });
    const newest = (await call('GET', '/cancel_sessions?limit=1', { cookie: w.member.cookie })).body.data[0];
    expect(newest).toEqual({
      id: w.sessions[7],
      object: 'cancel_session',
      customer_id: w.bob.id,
      subscription_id: w.bobSub.id,
      outcome: 'canceled',
      reason_code: 'too_expensive',
      feedback: 'too pricey',
      monthly_mrr_cents: 4900,
      currency: 'usd',
      created_at: '2026-06-01T00:00:00.000Z',
      ended_at: '2026-06-01T00:00:00.000Z',
      customer_email: w.bob.email,
    });
  });
});

describe('GET /dashboard/api/cancel_sessions: search and days', () => {
  it('from is inclusive and to exclusive, on created_at, on every page, in the count and the export', async () => {
    const w = await world();
    const at = async (query: string) =>
      (await call('GET', `/cancel_sessions?${query}`, { cookie: w.member.cookie })).body.data.map(
        (row: any) => row.created_at,
      );
    expect(await at(`from=${encodeURIComponent(TIE)}`)).toEqual([
      '2026-06-01T00:00:00.000Z',
      '2026-05-10T12:00:00.001Z',
      ...Array(5).fill(TIE),
    ]);
    expect(await at(`to=${encodeURIComponent(TIE)}`)).toEqual(['2026-05-01T00:00:00.000Z']);
    const query = `from=2026-05-01&to=${encodeURIComponent('2026-05-10T12:00:00.001Z')}`;
    const window = [...Array(5).fill(TIE), '2026-05-01T00:00:00.000Z'];
    expect(await at(query)).toEqual(window);
    const paged = await walk(`/cancel_sessions?${query}`, w.member.cookie, 2);
    expect(paged.map((row) => row.created_at)).toEqual(window);
    const counted = await call('GET', `/cancel_sessions/count?${query}`, { cookie: w.member.cookie });
    expect(counted.body).toEqual({ object: 'list_count', total: 6, total_capped: false });
    const csv = await call('GET', `/cancel_sessions/export.csv?${query}`, { cookie: w.member.cookie });
    expect(exportedIds(csv.text)).toEqual(ids(paged));
    // With another filter: the canceled ones of the window.
    const canceled = await walk(`/cancel_sessions?outcome=canceled&${query}`, w.member.cookie, 1);
    expect(canceled.map((row) => [row.outcome, row.created_at])).toEqual([
      ['canceled', TIE],
      ['canceled', TIE],
      ['canceled', TIE],
      ['canceled', '2026-05-01T00:00:00.000Z'],
    ]);
  });

  it("q finds a customer's sessions by their whole email, or part of their email or name, any case, % and _ literally", async () => {
    const w = await world();
    const sessionsOf = (customer: { id: string }) =>
      expectedIds('cancel_sessions', 'created_at', { workspace_id: w.ws, customer_id: customer.id });
    const found = async (q: string, more = '') => {
      const path = `/cancel_sessions?q=${encodeURIComponent(q)}${more}`;
      const rows = await walk(path, w.member.cookie, 2);
      return ids(rows);
    };
    const alices = await sessionsOf(w.alice);
    expect(alices).toHaveLength(3);
    // The whole email in another case, and a part of it.
    expect(await found(w.alice.email.toUpperCase())).toEqual(alices);
    expect(await found(w.alice.email.slice(3, -6).toUpperCase())).toEqual(alices);
    // Part of a name: bob is Robert Tables; his sessions, and those from 2026-05-02 on.
    await db()('customers').where({ id: w.bob.id }).update({ name: 'Robert Tables' });
    const bobs = await sessionsOf(w.bob);
    expect(await found('bert TAB')).toEqual(bobs);
    expect(await found('tables, robert', '&from=2026-05-02')).toEqual(bobs.slice(0, 2));
    // % and _ are characters, not LIKE's wildcards.
    const tag = unique('s').toLowerCase();
    const sale = await insertCustomer(w.ws, { email: `sale.${tag}@shop.test`, name: `100% Cotton ${tag}` });
    const notSale = await insertCustomer(w.ws, { email: `plain.${tag}@shop.test`, name: `1000 Cotton ${tag}` });
    const saleSession = await insertCancelSession(w.ws, sale, { created_at: '2026-02-01T00:00:00Z' });
    const notSaleSession = await insertCancelSession(w.ws, notSale, { created_at: '2026-02-02T00:00:00Z' });
    expect(await found(`0% cotton ${tag}`)).toEqual([saleSession]);
    expect(await found(`cotton ${tag}`)).toEqual([notSaleSession, saleSession]);
    expect(await found('nobody by this name')).toEqual([]);
    // Counted and exported as listed.
    const counted = await call('GET', '/cancel_sessions/count?q=bert%20tab', { cookie: w.member.cookie });
    expect(counted.body).toEqual({ object: 'list_count', total: 3, total_capped: false });
    const csv = await call('GET', '/cancel_sessions/export.csv?q=bert%20tab&from=2026-05-02', {
      cookie: w.member.cookie,
    });
    expect(exportedIds(csv.text)).toEqual(bobs.slice(0, 2));
  });

  it("q never finds another workspace's customers' sessions", async () => {
    const w = await world('Searching sessions');
    const other = await world('Other sessions');
    const tag = unique('iso').toLowerCase();
    const ours = await insertCustomer(w.ws, { email: `ours.${tag}@example.com`, name: `Jane ${tag}` });
    const theirs = await insertCustomer(other.ws, { email: `theirs.${tag}@example.com`, name: `Jane ${tag}` });
    const ourSession = await insertCancelSession(w.ws, ours, { created_at: '2026-05-01T00:00:00Z' });
    await insertCancelSession(other.ws, theirs, { created_at: '2026-05-01T00:00:00Z' });
    const search = async (path: string) => ids((await call('GET', path, { cookie: w.member.cookie })).body.data);
    expect(await search(`/cancel_sessions?q=jane%20${tag}`)).toEqual([ourSession]);
    expect(await search(`/cancel_sessions?q=theirs.${tag}`)).toEqual([]);
  });
});

describe('how many rows a list matches (docs/dashboard-api.md, "Counts")', () => {
  /** The count queries the API runs while `run` runs: the list's rows counted in a LIMIT subquery. */
  async function countQueries(run: () => Promise<unknown>): Promise<string[]> {
    const seen: string[] = [];
    const listener = (query: { sql: string }) => {
      if (query.sql.includes('count(*)::int AS n')) seen.push(query.sql);
    };
    db().on('query', listener);
    try {
      await run();
    } finally {
      db().off('query', listener);
    }
    return seen;
  }

  it('a list counts nothing: its count route does, with the same filters; a first page that is the whole list is its own count', async () => {
    const w = await world();
    const get = async (path: string) => {
      const reply = await call('GET', path, { cookie: w.member.cookie });
      expect(reply.status).toBe(200);
      return reply.body;
    };
    for (const [list, filters, total] of [
      ['/campaigns', 'limit=5', 12],
      ['/campaigns', 'status=in_flight&limit=2', 6],
      ['/customers', 'limit=1', 5],
      ['/customers', 'tag=vip&limit=1', 2],
      ['/cancel_sessions', 'limit=3', 8],
      ['/cancel_sessions', 'reason_code=too_expensive&limit=1', 6],
    ] as const) {
      // The rows never wait for a count: the first page and Load more's run none and carry none.
      let first: any;
      expect(await countQueries(async () => (first = await get(`${list}?${filters}`)))).toEqual([]);
      expect(first.has_more).toBe(true);
      expect(first).not.toHaveProperty('total');
      const cursor = encodeURIComponent(first.next_cursor);
      expect(await countQueries(() => get(`${list}?${filters}&cursor=${cursor}`))).toEqual([]);
      // The count route: one count, of the list's filters (limit is the list's, not a filter).
      const filtersOnly = filters.replace(/&?limit=\d+/, '');
      let counted: any;
      expect(
        await countQueries(async () => (counted = await get(`${list}/count${filtersOnly ? `?${filtersOnly}` : ''}`))),
      ).toHaveLength(1);
      expect(counted).toEqual({ object: 'list_count', total, total_capped: false });
    }
    // A first page that is the whole list is its own count: no query.
    let lost: any;
    expect(await countQueries(async () => (lost = await get('/campaigns?status=lost')))).toEqual([]);
    expect(lost).toMatchObject({ has_more: false, total: 2, total_capped: false });
    expect(lost.data).toHaveLength(2);
    // The count route takes the list's filters and nothing else, as the list refuses them.
    const refused = await call('GET', '/campaigns/count?status=nope', { cookie: w.member.cookie });
    expect(refused.status).toBe(400);
    expect((await call('GET', '/campaigns/count?cursor=x', { cookie: w.member.cookie })).status).toBe(400);
    expect((await call('GET', '/campaigns/count')).status).toBe(401);
  });

  it('counts at most 1,000: past that it says so (total_capped), reading 1,001 rows, never the whole list', async () => {
    const w = await world('Counted');
    await db().raw(
      `INSERT INTO recovery_campaigns (workspace_id, customer_id, subscription_id, psp_invoice_id, amount_cents, currency,
                                       status, decline_code, decline_category, first_failed_at, closed_at)
       SELECT ?, ?, ?, 'in_many_' || g, g, 'usd', CASE WHEN g <= 1000 THEN 'abandoned' ELSE 'lost' END,
              'generic_decline', 'unknown', timestamptz '2025-01-01T00:00:00Z' + g * interval '1 second',
              timestamptz '2025-02-01T00:00:00Z'
         FROM generate_series(1, 1200) AS g`,
      [w.ws, w.alice.id, w.aliceNew.id],
    );
    const body = async (path: string) => (await call('GET', path, { cookie: w.member.cookie })).body;
    let all: any;
    const [sql] = await countQueries(async () => (all = await body('/campaigns/count')));
    expect(all).toEqual({ object: 'list_count', total: 1000, total_capped: true });
    expect(sql).toMatch(/ limit \$\d+\) as "matching"$/);
    // Exactly 1,000 is counted, not capped; fewer with other filters, each counted as the list filters.
    await expect(body('/campaigns/count?status=abandoned')).resolves.toMatchObject({
      total: 1000,
      total_capped: false,
    });
    await expect(body('/campaigns/count?status=lost')).resolves.toMatchObject({ total: 202, total_capped: false });
    // From the 1,000th second to the 1,200th: g = 1000…1199.
    await expect(body('/campaigns/count?from=2025-01-01T00:16:40Z&to=2025-01-01T00:20:00Z')).resolves.toMatchObject({
      total: 200,
      total_capped: false,
    });
  });
});

describe('details', () => {
  it('a customer with all subscriptions, its newest 50 campaigns and cancel sessions, and win-backs', async () => {
    const w = await world();
    await db().raw(
      `INSERT INTO recovery_campaigns (workspace_id, customer_id, subscription_id, psp_invoice_id, amount_cents, currency,
                                       status, decline_code, decline_category, first_failed_at)
       SELECT ?, ?, ?, 'bulk_' || g, 100, 'usd', 'in_flight', 'generic_decline', 'soft',
              timestamptz '2025-01-01T00:00:00Z' + g * interval '1 minute'
         FROM generate_series(1, 45) g`,
      [w.ws, w.alice.id, w.aliceNew.id],
    );
    await db()('winbacks').insert([
      {
        workspace_id: w.ws,
        customer_id: w.alice.id,
        psp_subscription_id: 'sub_back_1',
        days_away: 12,
        amount_cents: 4900,
        currency: 'usd',
        recorded_at: T('2026-02-01T00:00:00Z'),
      },
      {
        workspace_id: w.ws,
        customer_id: w.alice.id,
        psp_subscription_id: 'sub_back_2',
        days_away: 3,
        amount_cents: 9900,
        currency: 'eur',
        recorded_at: T('2026-04-01T00:00:00Z'),
      },
      {
        workspace_id: w.ws,
        customer_id: w.bob.id,
        psp_subscription_id: 'sub_back_bob',
        days_away: 1,
        amount_cents: 100,
        currency: 'usd',
      },
    ]);
    const reply = await call('GET', `/customers/${w.alice.id.toUpperCase()}`, { cookie: w.member.cookie });
    expect(reply.status).toBe(200);
    const detail = reply.body;
    expect(detail).toMatchObject({ id: w.alice.id, object: 'customer', email: w.alice.email, tags: ['vip'] });
    expect(detail.subscriptions.map((s: any) => s.id)).toEqual([w.aliceNew.id, w.aliceOld.id]);
    expect(detail.subscriptions[1]).toMatchObject({
      object: 'subscription',
      status: 'canceled',
      customer_id: w.alice.id,
    });
    const alicesCampaigns = await expectedIds('recovery_campaigns', 'first_failed_at', {
      workspace_id: w.ws,
      customer_id: w.alice.id,
    });
    expect(alicesCampaigns).toHaveLength(53);
    expect(ids(detail.campaigns)).toEqual(alicesCampaigns.slice(0, 50));
    expect(detail.campaigns[0]).toMatchObject({ object: 'recovery_campaign', customer_email: w.alice.email });
    expect(ids(detail.cancel_sessions)).toEqual(
      await expectedIds('cancel_sessions', 'created_at', { workspace_id: w.ws, customer_id: w.alice.id }),
    );
    expect(detail.cancel_sessions).toHaveLength(3);
    expect(detail.cancel_sessions[0]).toMatchObject({ object: 'cancel_session', customer_email: w.alice.email });
    expect(detail.winbacks).toEqual([
      {
        id: expect.any(String),
        psp_subscription_id: 'sub_back_2',
        days_away: 3,
        amount_cents: 9900,
        currency: 'eur',
        recorded_at: '2026-04-01T00:00:00.000Z',
      },
      {
        id: expect.any(String),
        psp_subscription_id: 'sub_back_1',
        days_away: 12,
        amount_cents: 4900,
        currency: 'usd',
        recorded_at: '2026-02-01T00:00:00.000Z',
      },
    ]);
    const empty = (await call('GET', `/customers/${w.older.id}`, { cookie: w.member.cookie })).body;
    expect(empty).toMatchObject({ subscriptions: [], campaigns: [], cancel_sessions: [], winbacks: [] });
  });

  it('a cancel session with its customer and subscription (null when it had none), reason and feedback', async () => {
    const w = await world();
    const withSubscription = await call('GET', `/cancel_sessions/${w.sessions[7]}`, { cookie: w.member.cookie });
    expect(withSubscription.status).toBe(200);
    expect(withSubscription.body).toMatchObject({
      id: w.sessions[7],
      object: 'cancel_session',
      reason_code: 'too_expensive',
      feedback: 'too pricey',
      customer: { id: w.bob.id, object: 'customer', email: w.bob.email },
      subscription: { id: w.bobSub.id, object: 'subscription', customer_id: w.bob.id, status: 'active' },
    });
    const without = await call('GET', `/cancel_sessions/${w.sessions[0]}`, { cookie: w.owner.cookie });
    expect(without.body).toMatchObject({ subscription_id: null, subscription: null, feedback: null });
    expect(without.body.customer.id).toBe(w.alice.id);
  });

  it("a cancel session's timeline: its event with each delivery, as a campaign's; an abandoned one has none", async () => {
    const w = await world();
    const record = (outcome: 'saved_discount' | 'abandoned') =>
      recordCancelSession(db(), {
        workspace_id: w.ws,
        customer_id: w.bob.id,
        outcome,
        reason_code: 'too_expensive',
        monthly_mrr_cents: 4_900,
        currency: 'usd',
      });
    const saved = await record('saved_discount');
    const other = await record('saved_discount');
    const abandoned = await record('abandoned');
    const event = await db()('events').whereRaw(`data ->> 'session_id' = ?`, [saved.id]).first();
    const [endpoint] = await db()('webhook_endpoints')
      .insert({
        workspace_id: w.ws,
        name: 'Billing',
        url: 'https://e.invalid/',
        signing_secret_sealed: sealSecret(testSecretsKeyBytes(), 'whsec_x'),
      })
      .returning('id');
    const due = new Date(Date.now() + 60_000);
    const [pending] = await db()('webhook_deliveries')
      .insert({
        workspace_id: w.ws,
        endpoint_id: endpoint.id,
        event_id: event.id,
        event_seq: event.seq,
        event_type: 'cancel.saved',
        status: 'pending',
        attempt_count: 1,
        next_attempt_at: due,
      })
      .returning('id');
    // Its first attempt was refused, as the worker logs it: pending, retrying, with the reason.
    await db()('webhook_attempts').insert({
      delivery_id: pending.id,
      endpoint_id: endpoint.id,
      event_type: 'cancel.saved',
      attempt: 1,
      outcome: 'failed',
      http_status: null,
      error: 'connection refused',
      duration_ms: 3,
      next_attempt_at: due,
      url: 'https://e.invalid/',
    });
    // Another endpoint's delivery, which failed and then succeeded: its old error is not its last.
    // Both attempts went to its URL then, which has been edited since.
    const [archive] = await db()('webhook_endpoints')
      .insert({
        workspace_id: w.ws,
        name: 'Archive',
        url: 'https://archive.invalid/',
        signing_secret_sealed: sealSecret(testSecretsKeyBytes(), 'whsec_y'),
      })
      .returning('id');
    const [delivered] = await db()('webhook_deliveries')
      .insert({
        workspace_id: w.ws,
        endpoint_id: archive.id,
        event_id: event.id,
        event_seq: event.seq,
        event_type: 'cancel.saved',
        status: 'succeeded',
        attempt_count: 2,
        completed_at: due,
        created_at: new Date(Date.now() + 1_000),
      })
      .returning('id');
    await db()('webhook_attempts').insert(
      [
        { attempt: 1, outcome: 'failed', http_status: 503, error: 'HTTP 503' },
        { attempt: 2, outcome: 'succeeded', http_status: 200, error: null },
      ].map((line) => ({
        ...line,
        delivery_id: delivered.id,
        endpoint_id: archive.id,
        event_type: 'cancel.saved',
        duration_ms: 5,
        url: 'https://archive-old.invalid/',
      })),
    );

    const detail = await call('GET', `/cancel_sessions/${saved.id}`, { cookie: w.member.cookie });
    expect(detail.status).toBe(200);
    expect(detail.body.timeline).toEqual([
      {
        kind: 'event',
        at: event.created_at.toISOString(),
        event_id: event.id,
        type: 'cancel.saved',
        source: null,
        queued: true,
        // Still in the outbox (no worker here), to be sent: the workspace's processor is connected.
        not_sent_reason: null,
        deliveries: [
          {
            id: expect.any(String),
            endpoint_id: endpoint.id,
            endpoint_name: 'Billing',
            status: 'pending',
            attempt_count: 1,
            attempts_sent: 1,
            last_http_status: null,
            last_outcome: 'failed',
            last_error: 'connection refused',
            skipped_reason: null,
            completed_at: null,
            next_attempt_at: due.toISOString(),
            // Sent to the endpoint's URL as it is now: nothing to say.
            sent_to_url: null,
          },
          {
            id: delivered.id,
            endpoint_id: archive.id,
            endpoint_name: 'Archive',
            status: 'succeeded',
            attempt_count: 2,
            attempts_sent: 2,
            last_http_status: 200,
            last_outcome: 'succeeded',
            last_error: null,
            skipped_reason: null,
            completed_at: due.toISOString(),
            next_attempt_at: null,
            sent_to_url: 'https://archive-old.invalid/',
          },
        ],
      },
    ]);
    // Its own event only, never the other session's of the same customer.
    const theirs = (await call('GET', `/cancel_sessions/${other.id}`, { cookie: w.member.cookie })).body;
    expect(theirs.timeline.map((entry: { event_id: string }) => entry.event_id)).not.toContain(event.id);
    expect(theirs.timeline).toHaveLength(1);
    expect((await call('GET', `/cancel_sessions/${abandoned.id}`, { cookie: w.member.cookie })).body.timeline).toEqual(
      [],
    );
    // Sessions inserted without the domain function (the fixtures above) have no event.
    expect((await call('GET', `/cancel_sessions/${w.sessions[0]}`, { cookie: w.owner.cookie })).body.timeline).toEqual(
      [],
    );
  });

  it("another workspace's ids and ids that are not UUIDs are 404; its rows are in no list", async () => {
    const w = await world('Mine');
    const other = await world('Theirs');
    for (const path of [
      `/customers/${other.alice.id}`,
      `/cancel_sessions/${other.sessions[0]}`,
      `/campaigns/${other.campaigns[0]}`,
      '/customers/not-a-uuid',
      '/cancel_sessions/123',
      '/campaigns/not%20a%20uuid',
      '/customers/00000000-0000-0000-0000-000000000000',
    ]) {
      const reply = await call('GET', path, { cookie: w.owner.cookie });
      expect([path, reply.status, reply.body?.error?.type]).toEqual([path, 404, 'not_found']);
    }
    const mine = await walk('/campaigns', w.owner.cookie, 100);
    expect(ids(mine).filter((id) => other.campaigns.includes(id))).toEqual([]);
    expect(mine).toHaveLength(12);
    const byTheirInvoice = await call('GET', `/campaigns?q=${encodeURIComponent(other.invoice)}`, {
      cookie: w.owner.cookie,
    });
    expect(byTheirInvoice.body.data).toEqual([]);
    const byTheirEmail = await call('GET', `/customers?email=${encodeURIComponent(other.alice.email)}`, {
      cookie: w.owner.cookie,
    });
    expect(byTheirEmail.body.data).toEqual([]);
    expect(ids((await call('GET', '/cancel_sessions', { cookie: w.owner.cookie })).body.data)).toHaveLength(8);
  });

  it('a member, an admin and an owner read every data page; without a session it is 401', async () => {
    const w = await world();
    for (const who of [w.member, w.admin, w.owner]) {
      for (const path of [
        '/stats',
        '/campaigns',
        '/customers',
        '/cancel_sessions',
        `/campaigns/${w.findme}`,
        `/customers/${w.bob.id}`,
        `/cancel_sessions/${w.sessions[0]}`,
      ]) {
        const reply = await call('GET', path, { cookie: who.cookie });
        expect([path, reply.status]).toEqual([path, 200]);
      }
    }
    expect((await call('GET', `/customers/${w.bob.id}`)).status).toBe(401);
    // Request metrics name each detail's route pattern, never the id in its path.
    const metrics = await api.current.metricsText();
    for (const pattern of ['/customers/:id', '/cancel_sessions/:id', '/campaigns/:id']) {
      expect(metrics).toContain(`route="/dashboard/api${pattern}"`);
    }
    expect(metrics).not.toContain(w.sessions[0]);
    expect((await call('GET', '/stats?period=all_time', { cookie: w.member.cookie })).status).toBe(400);
  });
});
