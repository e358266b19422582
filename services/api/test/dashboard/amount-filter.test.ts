import { describe, expect, it } from '@jest/globals';
import { useApi } from '../harness.js';
import { dashboardClient, team, type DashboardCall } from './support.js';

/**
 * The campaigns list's amount filter over HTTP (docs/dashboard-api.md, "Amounts filter within
 * currency"): `currency`, `min_amount` and `max_amount` (minor units, both bounds inclusive) on
 * the list, its count and its CSV export; an amount without a currency, a bad value, bounds the
 * wrong way round and a parameter given twice are 400 invalid_param at that parameter; a cursor
 * pages within the filter and is refused under other amounts.
 */
const api = useApi();
const call: DashboardCall = (...args) => dashboardClient(api.current.url)(...args);
const db = () => api.current.db;

let counter = 0;
const unique = (prefix: string) => `${prefix}_${(counter += 1)}_${Math.random().toString(36).slice(2, 8)}`;

/** Campaigns as [currency, amount in minor units, status]: $100.00 and ¥10,000 are both 10000. */
const CAMPAIGNS: [string, number, string][] = [
  ['usd', 9999, 'in_flight'],
  ['usd', 10000, 'in_flight'],
  ['usd', 10000, 'lost'],
  ['usd', 10001, 'in_flight'],
  ['usd', 25000, 'in_flight'],
  ['usd', 0, 'in_flight'],
  ['jpy', 10000, 'in_flight'],
  ['jpy', 150000, 'in_flight'],
  ['eur', 10000, 'in_flight'],
  ['eur', 50000, 'lost'],
];

async function world() {
  const people = await team(db(), call, 'Amounts');
  const ws = people.workspace.id;
  const [customer]: { id: string }[] = await db()('customers')
    .insert({ workspace_id: ws, psp_customer_id: unique('cus'), email: `${unique('payer')}@example.com` })
    .returning('id');
  const [subscription]: { id: string }[] = await db()('subscriptions')
    .insert({
      workspace_id: ws,
      customer_id: customer!.id,
      psp_subscription_id: unique('sub'),
      status: 'active',
      plan_name: 'Pro',
      amount_cents: 4900,
      currency: 'usd',
      interval: 'month',
    })
    .returning('id');
  const campaigns: { id: string; currency: string; amount_cents: string; status: string }[] = await db()(
    'recovery_campaigns',
  )
    .insert(
      CAMPAIGNS.map(([currency, amount, status], i) => ({
        workspace_id: ws,
        customer_id: customer!.id,
        subscription_id: subscription!.id,
        psp_invoice_id: unique('in'),
        amount_cents: amount,
        currency,
        status,
        decline_code: 'generic_decline',
        decline_category: 'soft',
        // One minute apart, the first newest: the default order is the array's.
        first_failed_at: new Date(Date.UTC(2026, 4, 10, 12, 0) - i * 60_000),
        closed_at: status === 'lost' ? new Date('2026-05-11T00:00:00Z') : null,
      })),
    )
    .returning(['id', 'currency', 'amount_cents', 'status']);
  /** The ids of the campaigns `keep` picks, newest first (the list's default order). */
  const ids = (keep: (row: (typeof campaigns)[number]) => boolean) =>
    campaigns.filter((row) => keep(row)).map((row) => row.id);
  return { ...people, ws, campaigns, ids };
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

const today = () =>
  new Intl.DateTimeFormat('en-CA', { timeZone: 'UTC', year: 'numeric', month: '2-digit', day: '2-digit' }).format(
    new Date(),
  );

describe('GET /dashboard/api/campaigns?currency=&min_amount=&max_amount=', () => {
  it('filters by currency, by a minimum, a maximum or both, each bound inclusive, never across currencies', async () => {
    const w = await world();
    const amount = (row: (typeof w.campaigns)[number]) => Number(row.amount_cents);
    const cases: [string, string[]][] = [
      ['currency=usd', w.ids((row) => row.currency === 'usd')],
      ['currency=jpy', w.ids((row) => row.currency === 'jpy')],
      ['currency=gbp', []],
      ['currency=usd&min_amount=10000', w.ids((row) => row.currency === 'usd' && amount(row) >= 10000)],
      ['currency=usd&max_amount=10000', w.ids((row) => row.currency === 'usd' && amount(row) <= 10000)],
      [
        'currency=usd&min_amount=10000&max_amount=10001',
        w.ids((row) => row.currency === 'usd' && amount(row) >= 10000 && amount(row) <= 10001),
      ],
      [
        'currency=usd&min_amount=10000&max_amount=10000',
        w.ids((row) => row.currency === 'usd' && amount(row) === 10000),
      ],
      ['currency=usd&min_amount=0&max_amount=0', w.ids((row) => row.currency === 'usd' && amount(row) === 0)],
      ['currency=jpy&min_amount=10000', w.ids((row) => row.currency === 'jpy')],
      // Any case, as people and Stripe's pages write codes: the stored codes are lowercase.
      ['currency=JPY&min_amount=10000', w.ids((row) => row.currency === 'jpy')],
      ['currency=Usd', w.ids((row) => row.currency === 'usd')],
      ['currency=usd&min_amount=9223372036854775807', []],
      ['currency=usd&max_amount=9223372036854775807', w.ids((row) => row.currency === 'usd')],
      [
        'status=in_flight&currency=usd&min_amount=10000',
        w.ids((row) => row.status === 'in_flight' && row.currency === 'usd' && amount(row) >= 10000),
      ],
    ];
    // The bounds are inclusive: 10000 is in both a minimum and a maximum of 10000.
    expect(cases[3]![1]).toHaveLength(4);
    expect(cases[6]![1]).toHaveLength(2);
    for (const [query, expected] of cases) {
      const reply = await call('GET', `/campaigns?${query}`, { cookie: w.member.cookie });
      expect([query, reply.status, (reply.body.data as { id: string }[]).map((row) => row.id)]).toEqual([
        query,
        200,
        expected,
      ]);
      // A whole list on its first page carries its count; so does the count route, the same.
      expect([query, reply.body.total]).toEqual([query, expected.length]);
      const count = await call('GET', `/campaigns/count?${query}`, { cookie: w.member.cookie });
      expect([query, count.status, count.body]).toEqual([
        query,
        200,
        { object: 'list_count', total: expected.length, total_capped: false },
      ]);
      const csv = await call('GET', `/campaigns/export.csv?${query}`, { cookie: w.member.cookie });
      expect([query, csv.status, exportedIds(csv.text)]).toEqual([query, 200, expected]);
    }
  });

  it('pages through the filter with a cursor, in every order, as its count and export have it', async () => {
    const w = await world();
    const query = 'currency=usd&min_amount=10000&max_amount=25000';
    const usd = w.campaigns.filter((row) => row.currency === 'usd' && Number(row.amount_cents) >= 10000);
    const newest = usd.map((row) => row.id);
    for (const limit of [1, 2, 3]) expect(await walk(`/campaigns?${query}`, w.member.cookie, limit)).toEqual(newest);
    // Smallest first within the currency: amount, then id.
    const smallest = [...usd]
      .sort((a, b) => Number(a.amount_cents) - Number(b.amount_cents) || (a.id < b.id ? -1 : 1))
      .map((row) => row.id);
    expect(await walk(`/campaigns?${query}&sort=amount`, w.member.cookie, 1)).toEqual(smallest);
    expect(await walk(`/campaigns?${query}&sort=-amount`, w.member.cookie, 2)).toEqual([...smallest].reverse());
    const csv = await call('GET', `/campaigns/export.csv?${query}&sort=amount`, { cookie: w.member.cookie });
    expect(exportedIds(csv.text)).toEqual(smallest);
    const first = await call('GET', `/campaigns?${query}&limit=2`, { cookie: w.member.cookie });
    expect([first.body.has_more, first.body.total]).toEqual([true, undefined]);
    const count = await call('GET', `/campaigns/count?${query}`, { cookie: w.member.cookie });
    expect(count.body.total).toBe(newest.length);
  });

  it('refuses a cursor of other amounts or another currency, as one of other filters', async () => {
    const w = await world();
    const first = await call('GET', '/campaigns?currency=usd&min_amount=10000&limit=1', { cookie: w.member.cookie });
    const cursor = encodeURIComponent(first.body.next_cursor as string);
    const next = await call('GET', `/campaigns?currency=usd&min_amount=10000&limit=1&cursor=${cursor}`, {
      cookie: w.member.cookie,
    });
    expect(next.status).toBe(200);
    // The scope holds the lowercased code: the same list in another case takes the cursor.
    const upper = await call('GET', `/campaigns?currency=USD&min_amount=10000&limit=1&cursor=${cursor}`, {
      cookie: w.member.cookie,
    });
    expect([upper.status, upper.body.data]).toEqual([200, next.body.data]);
    for (const query of [
      'currency=usd&min_amount=10001',
      'currency=usd&min_amount=10000&max_amount=90000',
      'currency=eur&min_amount=10000',
      'currency=usd',
      '',
    ]) {
      const reply = await call('GET', `/campaigns?${query}&cursor=${cursor}`, { cookie: w.member.cookie });
      expect([query, reply.status, reply.body?.error?.param, reply.body?.error?.message]).toEqual([
        query,
        400,
        'cursor',
        'cursor: comes from another list, other filters or another sort; start again without a cursor',
      ]);
    }
  });

  it('names the export after its currency and amounts', async () => {
    const w = await world();
    const filename = async (query: string) => {
      const reply = await call('GET', `/campaigns/export.csv?${query}`, { cookie: w.member.cookie });
      expect([query, reply.status]).toEqual([query, 200]);
      return reply.headers.get('content-disposition');
    };
    expect(await filename('status=in_flight&currency=usd&min_amount=10000')).toBe(
      `attachment; filename="campaigns-in-flight-usd-min-10000-${today()}.csv"`,
    );
    expect(await filename('currency=jpy&min_amount=100&max_amount=5000&from=2026-05-01')).toBe(
      'attachment; filename="campaigns-jpy-min-100-max-5000-from-2026-05-01.csv"',
    );
    expect(await filename('currency=eur')).toBe(`attachment; filename="campaigns-eur-${today()}.csv"`);
    expect(await filename('currency=EUR')).toBe(`attachment; filename="campaigns-eur-${today()}.csv"`);
  });
});

describe('amount filter mistakes are 400 invalid_param at their parameter', () => {
  it('refuses an amount without currency, a bad currency or amount, bounds the wrong way round, and twice', async () => {
    const w = await world();
    const refused = async (path: string, param: string, message: RegExp) => {
      const reply = await call('GET', path, { cookie: w.member.cookie });
      expect([path, reply.status, reply.body?.error?.type, reply.body?.error?.param]).toEqual([
        path,
        400,
        'invalid_param',
        param,
      ]);
      expect([path, reply.body.error.message]).toEqual([path, expect.stringMatching(message)]);
    };
    const withoutCurrency =
      /^(min|max)_amount: amounts compare only within one currency \(1000 is ¥1,000 in jpy and \$10\.00 in usd\): give currency too$/;
    const currency = /^currency: must be a 3-letter ISO 4217 code, such as usd$/;
    const amount = (param: string) =>
      new RegExp(`^${param}: must be an integer from 0 to 9223372036854775807, in the currency's minor units$`);
    for (const route of ['/campaigns', '/campaigns/count', '/campaigns/export.csv']) {
      await refused(`${route}?min_amount=10000`, 'min_amount', withoutCurrency);
      await refused(`${route}?max_amount=10000&status=lost`, 'max_amount', withoutCurrency);
      await refused(`${route}?currency=u5d&min_amount=1`, 'currency', currency);
      await refused(`${route}?currency=us`, 'currency', currency);
      await refused(`${route}?currency=dollars`, 'currency', currency);
      await refused(`${route}?currency=`, 'currency', currency);
      await refused(`${route}?currency=usd&min_amount=-1`, 'min_amount', amount('min_amount'));
      await refused(`${route}?currency=usd&min_amount=99.50`, 'min_amount', amount('min_amount'));
      await refused(`${route}?currency=usd&max_amount=1e3`, 'max_amount', amount('max_amount'));
      await refused(`${route}?currency=usd&max_amount=0100`, 'max_amount', amount('max_amount'));
      await refused(`${route}?currency=usd&max_amount=`, 'max_amount', amount('max_amount'));
      await refused(`${route}?currency=usd&max_amount=%20100`, 'max_amount', amount('max_amount'));
      await refused(`${route}?currency=usd&max_amount=9223372036854775808`, 'max_amount', amount('max_amount'));
      await refused(
        `${route}?currency=usd&min_amount=99999999999999999999999999999`,
        'min_amount',
        amount('min_amount'),
      );
      await refused(
        `${route}?currency=usd&min_amount=10001&max_amount=10000`,
        'min_amount',
        /^min_amount: must not be more than max_amount$/,
      );
      await refused(`${route}?currency=usd&currency=eur`, 'currency', /^currency: give it once$/);
      await refused(`${route}?currency=usd&min_amount=1&min_amount=2`, 'min_amount', /^min_amount: give it once$/);
      await refused(`${route}?currency=usd&max_amount=1&max_amount=1`, 'max_amount', /^max_amount: give it once$/);
    }
  });
});
