import { describe, expect, it } from '@jest/globals';
import { useApi } from '../harness.js';
import { dashboardClient, team, type DashboardCall } from './support.js';

/**
 * The lists' `sort` over HTTP (docs/dashboard-api.md, "Sorting"): every order pages through
 * groups of equal keys exactly (ties by id, in the order's direction), amounts within currency,
 * a sort the list does not have and a cursor of another sort are 400 invalid_param, the count
 * takes the sort and ignores it, and the CSV export comes out in the list's order.
 */
const api = useApi();
const call: DashboardCall = (...args) => dashboardClient(api.current.url)(...args);
const db = () => api.current.db;

let counter = 0;
const unique = (prefix: string) => `${prefix}_${(counter += 1)}_${Math.random().toString(36).slice(2, 8)}`;

/** Campaigns as [currency, amount, first_failed_at]: ties of amount within a currency, and of time. */
const CAMPAIGNS: [string, number, string][] = [
  ['usd', 1000, '2026-05-10T12:00:00.000Z'],
  ['usd', 1000, '2026-05-10T12:00:00.000Z'],
  ['usd', 1000, '2026-05-11T00:00:00.000Z'],
  ['usd', 25000, '2026-05-10T12:00:00.000Z'],
  ['usd', 499, '2026-04-01T00:00:00.000Z'],
  ['jpy', 1000, '2026-05-10T12:00:00.000Z'],
  ['jpy', 120000, '2026-05-12T00:00:00.000Z'],
  ['jpy', 1000, '2026-03-01T00:00:00.000Z'],
  ['eur', 1000, '2026-05-10T12:00:00.000Z'],
  ['eur', 9900, '2026-05-10T12:00:00.000Z'],
  ['eur', 9900, '2026-06-01T00:00:00.000Z'],
];

/** Cancel sessions as [currency, monthly MRR, created_at]. */
const SESSIONS: [string, number, string][] = [
  ['usd', 4900, '2026-05-10T12:00:00.000Z'],
  ['usd', 4900, '2026-05-10T12:00:00.000Z'],
  ['usd', 19900, '2026-05-01T00:00:00.000Z'],
  ['eur', 4900, '2026-05-10T12:00:00.000Z'],
  ['gbp', 900, '2026-06-01T00:00:00.000Z'],
];

/** Customer created_at, four of them equal. */
const CUSTOMERS = [
  '2026-05-10T12:00:00.000Z',
  '2026-05-10T12:00:00.000Z',
  '2026-05-10T12:00:00.000Z',
  '2026-05-10T12:00:00.000Z',
  '2026-01-01T00:00:00.000Z',
  '2026-07-01T00:00:00.000Z',
];

async function world() {
  const people = await team(db(), call, 'Sorting');
  const ws = people.workspace.id;
  const customers: { id: string; created_at: Date }[] = await db()('customers')
    .insert(
      CUSTOMERS.map((at) => ({
        workspace_id: ws,
        psp_customer_id: unique('cus'),
        email: `${unique('person')}@example.com`,
        created_at: new Date(at),
      })),
    )
    .returning(['id', 'created_at']);
  const [subscription]: { id: string }[] = await db()('subscriptions')
    .insert({
      workspace_id: ws,
      customer_id: customers[0]!.id,
      psp_subscription_id: unique('sub'),
      status: 'active',
      plan_name: 'Pro',
      amount_cents: 4900,
      currency: 'usd',
      interval: 'month',
    })
    .returning('id');
  const campaigns: {
    id: string;
    currency: string;
    amount_cents: string;
    first_failed_at: Date;
    status: string;
  }[] = await db()('recovery_campaigns')
    .insert(
      CAMPAIGNS.map(([currency, amount, at], i) => ({
        workspace_id: ws,
        customer_id: customers[0]!.id,
        subscription_id: subscription!.id,
        psp_invoice_id: unique('in'),
        amount_cents: amount,
        currency,
        status: i % 3 === 0 ? 'lost' : 'in_flight',
        decline_code: 'generic_decline',
        decline_category: 'soft',
        first_failed_at: new Date(at),
        closed_at: i % 3 === 0 ? new Date(at) : null,
      })),
    )
    .returning(['id', 'currency', 'amount_cents', 'first_failed_at', 'status']);
  const sessions: {
    id: string;
    currency: string;
    monthly_mrr_cents: string;
    created_at: Date;
  }[] = await db()('cancel_sessions')
    .insert(
      SESSIONS.map(([currency, mrr, at], i) => ({
        workspace_id: ws,
        customer_id: customers[i]!.id,
        outcome: 'canceled',
        reason_code: 'too_expensive',
        monthly_mrr_cents: mrr,
        currency,
        created_at: new Date(at),
        ended_at: new Date(at),
      })),
    )
    .returning(['id', 'currency', 'monthly_mrr_cents', 'created_at']);
  return { ...people, ws, customers, campaigns, sessions };
}

/** Compares keys left to right: strings as Postgres's C-like order of these ASCII codes, numbers and dates by value. */
type Key = string | number | Date;
function byKeys<T>(keys: (row: T) => Key[], direction: 'asc' | 'desc') {
  const sign = direction === 'asc' ? 1 : -1;
  return (a: T, b: T) => {
    const [x, y] = [keys(a), keys(b)];
    for (let i = 0; i < x.length; i += 1) {
      const [p, q] = [x[i]!, y[i]!];
      const [u, v] = p instanceof Date ? [p.getTime(), (q as Date).getTime()] : [p, q];
      if (u < v) return -sign;
      if (u > v) return sign;
    }
    return 0;
  };
}

/** Every row of a list, page by page with `limit`, following next_cursor. */
async function walk(path: string, cookie: string, limit: number): Promise<string[]> {
  const rows: string[] = [];
  let cursor: string | null = null;
  for (let pages = 0; pages < 100; pages += 1) {
    const separator = path.includes('?') ? '&' : '?';
    const url = `${path}${separator}limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
    const reply = await call('GET', url, { cookie });
    expect([url, reply.status]).toEqual([url, 200]);
    rows.push(...(reply.body.data as { id: string }[]).map((row) => row.id));
    if (!reply.body.has_more) return rows;
    expect(reply.body.data).toHaveLength(limit);
    cursor = reply.body.next_cursor;
  }
  throw new Error('more than 100 pages');
}

const exportedIds = (csv: string) =>
  csv
    .trimEnd()
    .split('\n')
    .slice(1)
    .map((line) => line.split(',')[0]);

describe('GET /dashboard/api/campaigns?sort=', () => {
  it('pages through every order exactly, ties of amount and of time broken by id in the same direction', async () => {
    const w = await world();
    const amount = (row: (typeof w.campaigns)[number]) => [row.currency, Number(row.amount_cents), row.id];
    const failed = (row: (typeof w.campaigns)[number]) => [row.first_failed_at, row.id];
    const expected: Record<string, string[]> = {
      '-amount': [...w.campaigns].sort(byKeys(amount, 'desc')).map((row) => row.id),
      amount: [...w.campaigns].sort(byKeys(amount, 'asc')).map((row) => row.id),
      '-first_failed_at': [...w.campaigns].sort(byKeys(failed, 'desc')).map((row) => row.id),
      first_failed_at: [...w.campaigns].sort(byKeys(failed, 'asc')).map((row) => row.id),
    };
    // Largest first: the currencies Z to A, each largest first (docs/dashboard-api.md, "Sorting").
    const largest = expected['-amount']!.map((id) => w.campaigns.find((row) => row.id === id)!);
    expect(largest.map((row) => `${row.currency} ${row.amount_cents}`).slice(0, 6)).toEqual([
      'usd 25000',
      'usd 1000',
      'usd 1000',
      'usd 1000',
      'usd 499',
      'jpy 120000',
    ]);
    for (const [sort, ids] of Object.entries(expected)) {
      for (const limit of [1, 2, 3, 50]) {
        expect([sort, limit, await walk(`/campaigns?sort=${sort}`, w.member.cookie, limit)]).toEqual([
          sort,
          limit,
          ids,
        ]);
      }
    }
    // No sort is the default order, and so is naming it.
    expect(await walk('/campaigns', w.member.cookie, 2)).toEqual(expected['-first_failed_at']);
    // Filtered and sorted: the filter's rows in the sort's order.
    const lost = new Set(w.campaigns.filter((row) => row.status === 'lost').map((row) => row.id));
    expect(await walk('/campaigns?status=lost&sort=amount', w.member.cookie, 1)).toEqual(
      expected.amount!.filter((id) => lost.has(id)),
    );
  });

  it('the default sort named and no sort are one list: their cursors are each other’s', async () => {
    const w = await world();
    const first = await call('GET', '/campaigns?limit=3', { cookie: w.member.cookie });
    const cursor = encodeURIComponent(first.body.next_cursor);
    const named = await call('GET', `/campaigns?sort=-first_failed_at&limit=3&cursor=${cursor}`, {
      cookie: w.member.cookie,
    });
    const plain = await call('GET', `/campaigns?limit=3&cursor=${cursor}`, { cookie: w.member.cookie });
    expect(named.status).toBe(200);
    expect(named.body).toEqual(plain.body);
  });

  it('the CSV export comes out in the sort’s order, as the list pages through it', async () => {
    const w = await world();
    for (const query of ['sort=-amount', 'sort=amount', 'sort=first_failed_at', 'status=in_flight&sort=-amount']) {
      const listed = await walk(`/campaigns?${query}`, w.member.cookie, 2);
      // Exports read 500 rows a page; a page of 2 is the list's: both walk the same keyset.
      const csv = await call('GET', `/campaigns/export.csv?${query}`, { cookie: w.member.cookie });
      expect([query, csv.status]).toEqual([query, 200]);
      expect([query, exportedIds(csv.text)]).toEqual([query, listed]);
    }
  });
});

describe('GET /dashboard/api/customers and /cancel_sessions ?sort=', () => {
  it('customers: newest or oldest first, equal created_at broken by id; the export in the same order', async () => {
    const w = await world();
    const created = (row: (typeof w.customers)[number]) => [row.created_at, row.id];
    const oldest = [...w.customers].sort(byKeys(created, 'asc')).map((row) => row.id);
    for (const limit of [1, 3]) {
      expect(await walk('/customers?sort=created_at', w.member.cookie, limit)).toEqual(oldest);
      expect(await walk('/customers?sort=-created_at', w.member.cookie, limit)).toEqual([...oldest].reverse());
    }
    const csv = await call('GET', '/customers/export.csv?sort=created_at', { cookie: w.member.cookie });
    expect(exportedIds(csv.text)).toEqual(oldest);
  });

  it('cancel sessions: by monthly MRR within currency, either way, or oldest first; the export in the same order', async () => {
    const w = await world();
    const mrr = (row: (typeof w.sessions)[number]) => [row.currency, Number(row.monthly_mrr_cents), row.id];
    const smallest = [...w.sessions].sort(byKeys(mrr, 'asc')).map((row) => row.id);
    const oldest = [...w.sessions]
      .sort(byKeys((row: (typeof w.sessions)[number]) => [row.created_at, row.id], 'asc'))
      .map((row) => row.id);
    for (const limit of [1, 2]) {
      expect(await walk('/cancel_sessions?sort=monthly_mrr', w.member.cookie, limit)).toEqual(smallest);
      expect(await walk('/cancel_sessions?sort=-monthly_mrr', w.member.cookie, limit)).toEqual([...smallest].reverse());
      expect(await walk('/cancel_sessions?sort=created_at', w.member.cookie, limit)).toEqual(oldest);
    }
    const csv = await call('GET', '/cancel_sessions/export.csv?sort=-monthly_mrr', { cookie: w.member.cookie });
    expect(exportedIds(csv.text)).toEqual([...smallest].reverse());
  });
});

describe('sort mistakes are 400 invalid_param; the count ignores the sort', () => {
  it('refuses a sort the list does not have, given twice, on the list, its count and its export', async () => {
    const w = await world();
    const refused = async (path: string, message: RegExp) => {
      const reply = await call('GET', path, { cookie: w.member.cookie });
      expect([path, reply.status, reply.body?.error?.type, reply.body?.error?.param]).toEqual([
        path,
        400,
        'invalid_param',
        'sort',
      ]);
      expect(reply.body.error.message).toMatch(message);
    };
    const campaigns = /^sort: must be one of -first_failed_at, first_failed_at, -amount, amount$/;
    await refused('/campaigns?sort=amount_cents', campaigns);
    await refused('/campaigns?sort=', campaigns);
    await refused('/campaigns?sort=%2Bamount', campaigns);
    await refused('/campaigns?sort=-AMOUNT', campaigns);
    await refused('/campaigns?sort=toString', campaigns);
    await refused('/campaigns/count?sort=-created_at', campaigns);
    await refused('/campaigns/export.csv?sort=-monthly_mrr', campaigns);
    await refused('/campaigns?sort=amount&sort=-amount', /^sort: give it once$/);
    await refused('/customers?sort=email', /^sort: must be one of -created_at, created_at$/);
    await refused('/customers/export.csv?sort=-amount', /^sort: must be one of -created_at, created_at$/);
    await refused(
      '/cancel_sessions?sort=-amount',
      /^sort: must be one of -created_at, created_at, -monthly_mrr, monthly_mrr$/,
    );
  });

  it('a cursor of another sort is refused as one of other filters, even with the same keys', async () => {
    const w = await world();
    const cursorOf = async (path: string) =>
      encodeURIComponent((await call('GET', path, { cookie: w.member.cookie })).body.next_cursor as string);
    const refused = async (path: string) => {
      const reply = await call('GET', path, { cookie: w.member.cookie });
      expect([path, reply.status, reply.body?.error?.type]).toEqual([path, 400, 'invalid_param']);
      expect(reply.body.error.message).toBe(
        'cursor: comes from another list, other filters or another sort; start again without a cursor',
      );
    };
    const largest = await cursorOf('/campaigns?sort=-amount&limit=2');
    const newest = await cursorOf('/campaigns?limit=2');
    const oldest = await cursorOf('/campaigns?sort=first_failed_at&limit=2');
    expect((await call('GET', `/campaigns?sort=-amount&cursor=${largest}`, { cookie: w.member.cookie })).status).toBe(
      200,
    );
    // The same keys, the other direction: it would start the list at an arbitrary row.
    await refused(`/campaigns?sort=amount&cursor=${largest}`);
    await refused(`/campaigns?sort=-first_failed_at&cursor=${oldest}`);
    // Other keys: a time where an amount is expected, and the other way round.
    await refused(`/campaigns?sort=-amount&cursor=${newest}`);
    await refused(`/campaigns?cursor=${largest}`);
    await refused(`/campaigns?status=lost&sort=-amount&cursor=${largest}`);
    await refused(`/cancel_sessions?sort=-monthly_mrr&cursor=${largest}`);
    const mrr = await cursorOf('/cancel_sessions?sort=-monthly_mrr&limit=1');
    await refused(`/cancel_sessions?sort=monthly_mrr&cursor=${mrr}`);
    const customers = await cursorOf('/customers?sort=created_at&limit=1');
    await refused(`/customers?cursor=${customers}`);
    // A cursor this list never wrote: an amount that is no integer.
    const [id, scope] = [
      w.campaigns[0]!.id,
      Buffer.from(decodeURIComponent(largest), 'base64url').toString('utf8').split('|')[3],
    ];
    const forged = Buffer.from(`usd|12.5|${id}|${scope}`).toString('base64url');
    const reply = await call('GET', `/campaigns?sort=-amount&cursor=${forged}`, { cookie: w.member.cookie });
    expect([reply.status, reply.body.error.message]).toEqual([
      400,
      'cursor: must be a next_cursor value returned by this list',
    ]);
  });

  it('the count takes the sort and counts the same rows', async () => {
    const w = await world();
    for (const path of ['/campaigns/count', '/customers/count', '/cancel_sessions/count']) {
      const plain = await call('GET', path, { cookie: w.member.cookie });
      const sort = path.startsWith('/campaigns') ? 'amount' : 'created_at';
      const sorted = await call('GET', `${path}?sort=${sort}`, { cookie: w.member.cookie });
      expect([path, sorted.status, sorted.body]).toEqual([path, 200, plain.body]);
    }
    const lost = await call('GET', '/campaigns/count?status=lost&sort=-amount', { cookie: w.member.cookie });
    expect(lost.body).toEqual({ object: 'list_count', total: 4, total_capped: false });
  });
});
