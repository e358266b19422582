import { describe, expect, it } from '@jest/globals';
import type { Knex } from 'knex';
import { newId } from '@retention/core';
import type { CampaignListParams, CursorParams, List } from '@retention/sdk';
import { useApi, workspaceWithToken } from './harness.js';

const api = useApi();

interface Seeded {
  token: string;
  workspaceId: string;
  customerId: string;
  subscriptionId: string;
}

async function seedWorkspace(): Promise<Seeded> {
  const { token, workspaceId, ids } = await workspaceWithToken(api.current, {
    customers: [{ key: 'c', subscriptions: [{ key: 's' }] }],
  });
  return { token, workspaceId, customerId: ids.customers.c!, subscriptionId: ids.subscriptions.s! };
}

/** Inserts campaigns whose first_failed_at are the given SQL timestamp literals (microseconds allowed). */
async function insertCampaigns(seed: Seeded, timestamps: string[], status = 'in_flight'): Promise<void> {
  const rows = timestamps.map((timestamp) => ({
    id: newId(),
    workspace_id: seed.workspaceId,
    customer_id: seed.customerId,
    subscription_id: seed.subscriptionId,
    psp_invoice_id: `in_${newId()}`,
    amount_cents: 100,
    currency: 'usd',
    status,
    decline_code: 'generic_decline',
    decline_category: 'soft',
    first_failed_at: api.current.db.raw('?::timestamptz', [timestamp]),
    ...(status === 'lost' && { closed_at: api.current.db.fn.now() }),
  }));
  for (let i = 0; i < rows.length; i += 1000)
    await api.current.db('recovery_campaigns').insert(rows.slice(i, i + 1000));
}

type Page = List<{ id: string; first_failed_at: string; status: string }>;

/**
 * Walks every page by hand, following next_cursor, and checks that the SDK's iterator
 * (`all`) yields exactly the rows of those pages, in the same order.
 */
async function walk<P extends CursorParams>(
  resource: { list(params: P): Promise<List<unknown>>; all(params: P): AsyncIterable<unknown> },
  params = {} as P,
): Promise<Page[]> {
  const pages: Page[] = [];
  let cursor: string | null = null;
  for (let guard = 0; guard < 1000; guard += 1) {
    const page = (await resource.list(cursor ? { ...params, cursor } : params)) as Page;
    expect(api.current.lastResponse().status).toBe(200);
    pages.push(page);
    if (!page.has_more) {
      const iterated: unknown[] = [];
      for await (const row of resource.all(params)) iterated.push(row);
      expect(iterated).toEqual(pages.flatMap((each) => each.data));
      return pages;
    }
    cursor = page.next_cursor;
  }
  throw new Error('pagination did not end');
}

const clientOf = (seed: { token: string }) => api.current.client(seed.token);

/** Asserts the walk saw every expected row once, in order, without splitting a timestamp group. */
function expectCompleteWalk(pages: Page[], expected: Array<{ id: string; first_failed_at: Date }>): void {
  const sorted = [...expected].sort(
    (a, b) => b.first_failed_at.getTime() - a.first_failed_at.getTime() || (a.id < b.id ? 1 : -1),
  );
  const seen = pages.flatMap((page) => page.data);
  expect(seen.map((row) => row.id)).toEqual(sorted.map((row) => row.id));
  for (const [index, page] of pages.entries()) {
    const last = page.data.at(-1);
    expect(page.next_cursor).toBe(last ? last.first_failed_at : null);
    const next = pages[index + 1];
    if (next && last) expect(next.data.every((row) => row.first_failed_at < last.first_failed_at)).toBe(true);
    const groups = new Set(page.data.map((row) => row.first_failed_at));
    if (page.data.length > 50) expect(groups.size).toBe(1);
  }
}

async function campaignsOf(seed: Seeded, status?: string) {
  const query = api.current.db('recovery_campaigns').where({ workspace_id: seed.workspaceId });
  if (status) query.where({ status });
  const rows: Array<{ id: string; first_failed_at: Date }> = await query.select('id', 'first_failed_at');
  return rows;
}

describe('keyset pagination', () => {
  it('walks tie groups of every size without losing, repeating or splitting any', async () => {
    const seed = await seedWorkspace();
    const groupSizes = [1, 3, 49, 2, 60, 1, 50, 51, 5, 1, 120, 7];
    const timestamps = groupSizes.flatMap((size, group) =>
      Array.from({ length: size }, () => `2026-01-${String(group + 1).padStart(2, '0')}T12:00:00.250Z`),
    );
    await insertCampaigns(seed, timestamps);
    const pages = await walk(clientOf(seed).campaigns);
    expectCompleteWalk(pages, await campaignsOf(seed));
    // A group bigger than a page comes whole, in one page.
    expect(pages.some((page) => page.data.length === 120)).toBe(true);
    expect(pages.some((page) => page.data.length === 60)).toBe(true);
  });

  it('treats timestamps less than a millisecond apart as one group and still visits each row once', async () => {
    const seed = await seedWorkspace();
    const timestamps = Array.from(
      { length: 130 },
      (_, i) =>
        `2026-02-01T00:00:00.${String(100 + Math.floor(i / 3)).padStart(3, '0')}${String((i % 3) * 333).padStart(3, '0')}Z`,
    );
    await insertCampaigns(seed, timestamps);
    const pages = await walk(clientOf(seed).campaigns);
    expectCompleteWalk(pages, await campaignsOf(seed));
    for (const page of pages) {
      for (const row of page.data) expect(row.first_failed_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    }
  });

  it('pages through a filter', async () => {
    const seed = await seedWorkspace();
    await insertCampaigns(
      seed,
      Array.from(
        { length: 80 },
        (_, i) => `2026-03-01T00:00:${String(i % 60).padStart(2, '0')}.${String(i).padStart(3, '0')}Z`,
      ),
    );
    await insertCampaigns(
      seed,
      Array.from(
        { length: 75 },
        (_, i) => `2026-03-01T00:01:${String(i % 60).padStart(2, '0')}.${String(i).padStart(3, '0')}Z`,
      ),
      'lost',
    );
    const pages = await walk<CampaignListParams>(clientOf(seed).campaigns, { status: 'lost' });
    expect(pages).toHaveLength(2);
    expectCompleteWalk(pages, await campaignsOf(seed, 'lost'));
  });

  it('returns only rows strictly before the cursor, and an empty last page with next_cursor null', async () => {
    const seed = await seedWorkspace();
    await insertCampaigns(seed, ['2026-04-01T00:00:00.000Z', '2026-04-01T00:00:00.001Z', '2026-04-01T00:00:00.002Z']);
    const client = clientOf(seed);
    const at = await client.campaigns.list({ cursor: '2026-04-01T00:00:00.001Z' });
    expect(at.data.map((row) => row.first_failed_at)).toEqual(['2026-04-01T00:00:00.000Z']);
    const between = await client.campaigns.list({ cursor: '2026-04-01T00:00:00.0015Z' });
    expect(between.data).toHaveLength(2);
    const none = await client.campaigns.list({ cursor: '2000-01-01' });
    expect(none).toEqual({ object: 'list', data: [], has_more: false, next_cursor: null });
  });

  it('reads a cursor of any precision as the exact instant, so sub-millisecond digits skip and repeat nothing', async () => {
    const seed = await seedWorkspace();
    // Stored at .122, .123 (from .1234 and .123) and .124 (from .1236): whole milliseconds.
    await insertCampaigns(seed, [
      '2026-05-01T00:00:00.122Z',
      '2026-05-01T00:00:00.1234Z',
      '2026-05-01T00:00:00.123Z',
      '2026-05-01T00:00:00.1236Z',
    ]);
    const client = clientOf(seed);
    const before = async (cursor: string) =>
      (await client.campaigns.list({ cursor })).data.map((row) => row.first_failed_at.slice(20, 23));
    // A row's millisecond is before any instant later within that millisecond...
    expect(await before('2026-05-01T00:00:00.1230000000001Z')).toEqual(['123', '123', '122']);
    expect(await before(`2026-05-01T00:00:00.123${'0'.repeat(40)}1Z`)).toEqual(['123', '123', '122']);
    // ...and not before the millisecond itself, however many zeros follow it.
    expect(await before(`2026-05-01T00:00:00.123${'0'.repeat(40)}Z`)).toEqual(['122']);
    expect(await before('2026-05-01T00:00:00.1229999999999Z')).toEqual(['122']);

    // A client that re-serialises each next_cursor with nanoseconds walks every row once.
    const seen: string[] = [];
    let cursor: string | undefined;
    for (let guard = 0; guard < 10; guard += 1) {
      const page = await client.campaigns.list(cursor ? { cursor } : {});
      seen.push(...page.data.map((row) => row.id));
      if (!page.next_cursor) break;
      cursor = page.next_cursor.replace('Z', '000000Z');
    }
    expect(seen.sort()).toEqual((await campaignsOf(seed)).map((row) => row.id).sort());
  });

  it('walks customers by created_at and cancel sessions by created_at', async () => {
    const customers = Array.from({ length: 125 }, (_, i) => ({
      key: `c${i}`,
      created_at: `2026-05-01T00:00:0${i % 3}.000Z`,
    }));
    const { token, ids } = await workspaceWithToken(api.current, {
      customers,
      cancel_sessions: customers.map((customer, i) => ({
        customer: customer.key,
        created_at: `2026-05-02T00:00:00.${String(i % 40).padStart(3, '0')}Z`,
      })),
    });
    const customerPages = await walk(api.current.client(token).customers);
    expect(new Set(customerPages.flatMap((page) => page.data.map((row) => row.id)))).toEqual(
      new Set(Object.values(ids.customers)),
    );
    expect(customerPages.flatMap((page) => page.data)).toHaveLength(125);
    const sessionPages = await walk(api.current.client(token).cancelSessions);
    expect(sessionPages.flatMap((page) => page.data.map((row) => row.id)).sort()).toEqual(
      Object.values(ids.cancel_sessions).sort(),
    );
  });

  it('reads a deep page through the keyset index, without sorting or skipping rows', async () => {
    const seed = await seedWorkspace();
    await insertCampaigns(
      seed,
      Array.from({ length: 20_000 }, (_, i) => new Date(Date.UTC(2025, 0, 1) + i * 1000).toISOString()),
    );
    await api.current.db.raw('ANALYZE recovery_campaigns');
    const queries: Knex.Sql[] = [];
    const capture = (query: Knex.Sql) => {
      if (query.sql.includes('"recovery_campaigns"')) queries.push(query);
    };
    api.current.db.on('query', capture);
    try {
      const deep = await clientOf(seed).campaigns.list({ cursor: '2025-01-01T00:30:00Z' });
      expect(deep.data).toHaveLength(50);
    } finally {
      api.current.db.off('query', capture);
    }
    expect(queries).toHaveLength(1);
    const { rows } = await api.current.db.raw<{ rows: Array<{ 'QUERY PLAN': unknown }> }>(
      `EXPLAIN (FORMAT JSON) ${queries[0]!.sql.replace(/\$\d+/g, '?')}`,
      queries[0]!.bindings as Knex.RawBinding[],
    );
    const plan = JSON.stringify(rows[0]!['QUERY PLAN']);
    expect(plan).toContain('recovery_campaigns_list_idx');
    expect(plan).not.toContain('"Sort"');
  });
});
