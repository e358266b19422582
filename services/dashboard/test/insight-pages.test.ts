import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { BrowserContext, Locator, Page } from 'playwright-core';
import { CAMPAIGN_EXPORT_COLUMNS, CUSTOMER_EXPORT_COLUMNS } from '@retention/db';
import { hashPassword, loadFixtures, setFxRate } from '@retention/domain';
import { verifyWebhook } from '@retention/sdk';
import { eventually, testSecretsKeyBytes } from '@retention/testkit';
import { PASSWORD, signInThroughForm, useDashboardWorld } from './support/dashboard-world.js';
import { checkPage, screenshot } from './support/page-checks.js';

const UTF8_BOM = '\ufeff';

/** The campaigns list's search box, by its accessible name. */
const CAMPAIGN_SEARCH = 'Search by invoice id, customer email or name';

/**
 * The insight pages (overview, campaigns, customers, cancel sessions, details, Mark lost) in a
 * real headless Chromium against the real API app, PostgreSQL, Redis, a worker and an HTTPS
 * receiver. Controls are found by role and name only.
 *
 * Two workspaces of their own:
 * - Globex, whose overview numbers are computed by hand below (USD display currency; EUR and
 *   JPY convert with the default FX table, THB has no rate);
 * - Initech, with a tie group of 60 campaigns opened at the same instant (more than a page),
 *   an endpoint subscribed to recovery.lost, and a member;
 * - Soylent, shown in HUF, with a campaign in IQD: currencies whose ISO 4217 decimals (2 and 3)
 *   the browser's CLDR data leaves out (0), and whose median time to recover is 1 day in the
 *   last 30 days and 2.75 days of all time.
 */
const world = useDashboardWorld();

const DAY = 86_400_000;
const now = Math.floor(Date.now() / 60_000) * 60_000;
const daysAgo = (days: number) => new Date(now - days * DAY).toISOString();
const TIE_AT = daysAgo(3);
const TIE_SIZE = 60;
const tieInvoice = (index: number) => `in_tie_${String(index).padStart(2, '0')}`;
const HOOK_PATH = '/hooks/initech';

/** A day in New York's calendar (`2026-11-20`), the zone of the date-filter test's browser. */
const newYorkDay = (ms: number) => new Intl.DateTimeFormat('en-CA', { timeZone: 'America/New_York' }).format(ms);
/** The instant a New York day starts: UTC midnight, moved by New York's offset then. */
function newYorkMidnight(day: string): number {
  const utcMidnight = Date.parse(`${day}T00:00:00Z`);
  const wall = new Intl.DateTimeFormat('en-CA', {
    timeZone: 'America/New_York',
    hourCycle: 'h23',
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
  }).formatToParts(utcMidnight);
  const part = (type: string) => Number(wall.find((entry) => entry.type === type)!.value);
  const wallAsUtc = Date.UTC(part('year'), part('month') - 1, part('day'), part('hour'), part('minute'));
  return utcMidnight + (utcMidnight - wallAsUtc);
}
const HOUR = 3_600_000;
const FILTER_FROM = newYorkDay(now - 6 * DAY);
const FILTER_BEFORE = newYorkDay(now - 3 * DAY);
/** The evening before FILTER_FROM in New York, already FILTER_FROM in UTC. */
const EVE_OF_RANGE = new Date(newYorkMidnight(FILTER_FROM) - HOUR).toISOString();
/** The last evening in the range in New York, already FILTER_BEFORE in UTC. */
const LAST_EVENING_IN_RANGE = new Date(newYorkMidnight(FILTER_BEFORE) - HOUR).toISOString();

let globex: { ownerEmail: string; customerId: string };
let initech: {
  id: string;
  markMeId: string;
  openId: string;
  hookId: string;
  hookSecret: string;
  customerId: string;
  sessionId: string;
};
let contexts: BrowserContext[] = [];

/**
 * PASSWORD's hash, made once: argon2id takes a while, and every person here has the same password.
 */
let passwordHash: Promise<string> | undefined;

async function setPassword(email: string, name: string): Promise<void> {
  passwordHash ??= hashPassword(PASSWORD);
  await world.current
    .db('users')
    .where({ email })
    .update({ password_hash: await passwordHash, name });
}

beforeAll(async () => {
  const { db } = world.current;
  // The operator's rates for Soylent (`cli fx set`): the default table has neither currency.
  await setFxRate(db, { currency: 'huf', per_usd: '360' });
  await setFxRate(db, { currency: 'iqd', per_usd: '1310' });
  const loaded = await loadFixtures(db, testSecretsKeyBytes(), {
    workspaces: [
      {
        key: 'soylent',
        name: 'Soylent',
        display_currency: 'huf',
        users: [{ key: 'owner', email: 'owner@soylent.test', role: 'owner' }],
        customers: [{ key: 's', email: 'sol@example.com', subscriptions: [{ key: 's-sub' }] }],
        campaigns: [
          // Recovered after 1 day, and after 4.5 days 60 days ago: of all time, the median is 2.75.
          {
            customer: 's',
            psp_invoice_id: 'in_huf',
            amount_cents: 5_795_529, // HUF 57,955.29
            currency: 'huf',
            status: 'recovered',
            recovered_via: 'retry',
            first_failed_at: daysAgo(2),
            recovered_at: daysAgo(1),
            closed_at: daysAgo(1),
          },
          {
            customer: 's',
            psp_invoice_id: 'in_huf_old',
            amount_cents: 100, // HUF 1.00
            currency: 'huf',
            status: 'recovered',
            recovered_via: 'retry',
            first_failed_at: daysAgo(64.5),
            recovered_at: daysAgo(60),
            closed_at: daysAgo(60),
          },
          // IQD 1,500.000 (exponent 3) = HUF 412.21 at 1310 and 360 per dollar (412.2137…).
          {
            customer: 's',
            psp_invoice_id: 'in_iqd',
            amount_cents: 1_500_000,
            currency: 'iqd',
            status: 'in_flight',
            first_failed_at: daysAgo(1),
          },
        ],
      },
      {
        key: 'globex',
        name: 'Globex',
        display_currency: 'usd',
        users: [{ key: 'owner', email: 'owner@globex.test', role: 'owner' }],
        customers: [{ key: 'g', email: 'gina@example.com', subscriptions: [{ key: 'g-sub' }] }],
        campaigns: [
          // Recovered after 1, 3 and 2 days (the last one 60 days ago: outside the last 30 days).
          {
            customer: 'g',
            amount_cents: 10_000,
            currency: 'usd',
            status: 'recovered',
            recovered_via: 'retry',
            first_failed_at: daysAgo(2),
            recovered_at: daysAgo(1),
            closed_at: daysAgo(1),
          },
          {
            customer: 'g',
            amount_cents: 9_200, // EUR 92.00 = USD 100.00 at 0.92 per dollar
            currency: 'eur',
            status: 'recovered',
            recovered_via: 'customer_update',
            first_failed_at: daysAgo(5),
            recovered_at: daysAgo(2),
            closed_at: daysAgo(2),
          },
          {
            customer: 'g',
            amount_cents: 20_000,
            currency: 'usd',
            status: 'recovered',
            recovered_via: 'manual',
            first_failed_at: daysAgo(60),
            recovered_at: daysAgo(58),
            closed_at: daysAgo(58),
          },
          // At risk: JPY 15,000 (exponent 0) = USD 100.00 at 150 per dollar; THB has no rate.
          { customer: 'g', amount_cents: 15_000, currency: 'jpy', status: 'in_flight', first_failed_at: daysAgo(1) },
          { customer: 'g', amount_cents: 350_000, currency: 'thb', status: 'in_flight', first_failed_at: daysAgo(4) },
          {
            customer: 'g',
            amount_cents: 5_000,
            currency: 'usd',
            status: 'lost',
            first_failed_at: daysAgo(10),
            closed_at: daysAgo(2),
          },
        ],
        cancel_sessions: [
          {
            customer: 'g',
            outcome: 'saved_discount',
            reason_code: 'too_expensive',
            monthly_mrr_cents: 3_000,
            currency: 'usd',
            created_at: daysAgo(3),
            ended_at: daysAgo(3),
          },
          {
            customer: 'g',
            outcome: 'saved_pause',
            reason_code: 'missing_features',
            monthly_mrr_cents: 4_600, // EUR 46.00 = USD 50.00
            currency: 'eur',
            created_at: daysAgo(4),
            ended_at: daysAgo(4),
          },
          {
            customer: 'g',
            outcome: 'canceled',
            reason_code: 'too_expensive',
            monthly_mrr_cents: 2_000,
            currency: 'eur',
            created_at: daysAgo(2),
            ended_at: daysAgo(2),
          },
          {
            customer: 'g',
            outcome: 'canceled',
            reason_code: 'switched_service',
            monthly_mrr_cents: 2_000,
            currency: 'usd',
            created_at: daysAgo(40),
            ended_at: daysAgo(40),
          },
        ],
      },
      // 6 of 11 closed and 6 of 11 decided: 54.545…%, which the stats' 4-place rate (0.5455)
      // rounded again would show as 54.6%.
      {
        key: 'vandelay',
        name: 'Vandelay',
        users: [{ key: 'owner', email: 'owner@vandelay.test', role: 'owner' }],
        customers: [{ key: 'v', email: 'art@example.com', subscriptions: [{ key: 'v-sub' }] }],
        campaigns: Array.from({ length: 11 }, (_, index) => ({
          customer: 'v',
          amount_cents: 1_000,
          currency: 'usd',
          first_failed_at: daysAgo(3),
          closed_at: daysAgo(1),
          ...(index < 6
            ? { status: 'recovered' as const, recovered_via: 'retry' as const, recovered_at: daysAgo(1) }
            : { status: 'lost' as const }),
        })),
        cancel_sessions: Array.from({ length: 11 }, (_, index) => ({
          customer: 'v',
          outcome: index < 6 ? ('saved_discount' as const) : ('canceled' as const),
          reason_code: 'too_expensive' as const,
          monthly_mrr_cents: 1_000,
          currency: 'usd',
          created_at: daysAgo(2),
          ended_at: daysAgo(2),
        })),
      },
      // A workspace just made: nothing to count or draw yet.
      { key: 'hooli', name: 'Hooli', users: [{ key: 'owner', email: 'owner@hooli.test', role: 'owner' }] },
      {
        key: 'initech',
        name: 'Initech',
        users: [
          { key: 'owner', email: 'owner@initech.test', role: 'owner' },
          { key: 'member', email: 'member@initech.test', role: 'member' },
        ],
        customers: [
          {
            key: 'ann',
            email: 'ann@initech-customers.test',
            tags: ['vip', 'annual'],
            subscriptions: [{ key: 'ann-sub', plan_name: 'Pro' }],
          },
          {
            key: 'bob',
            email: 'bob@initech-customers.test',
            name: 'Robert Paulson',
            tags: ['VIP'],
            subscriptions: [{ key: 'bob-sub' }],
          },
          { key: 'cy', email: 'cy@initech-customers.test', subscriptions: [{ key: 'cy-sub' }] },
        ],
        campaigns: [
          ...Array.from({ length: TIE_SIZE }, (_, index) => ({
            customer: 'ann',
            subscription: 'ann-sub',
            psp_invoice_id: tieInvoice(index),
            decline_category: 'soft' as const,
            status: 'in_flight' as const,
            first_failed_at: TIE_AT,
          })),
          ...Array.from({ length: 5 }, (_, index) => ({
            customer: 'bob',
            psp_invoice_id: `in_bob_${index}`,
            decline_code: 'expired_card',
            decline_category: 'card_update_required' as const,
            status: 'in_flight' as const,
            first_failed_at: TIE_AT,
          })),
          ...Array.from({ length: 3 }, (_, index) => ({
            customer: 'ann',
            psp_invoice_id: `in_done_${index}`,
            decline_category: 'soft' as const,
            status: 'recovered' as const,
            recovered_via: 'retry' as const,
            first_failed_at: TIE_AT,
            recovered_at: daysAgo(1),
            closed_at: daysAgo(1),
          })),
          {
            key: 'markme',
            customer: 'bob',
            psp_invoice_id: 'in_markme',
            amount_cents: 4_200,
            currency: 'usd',
            decline_code: 'authentication_required',
            decline_category: 'authentication_required',
            status: 'in_flight',
            first_failed_at: daysAgo(1),
          },
          ...[
            ['in_cy_eve', EVE_OF_RANGE],
            ['in_cy_last_evening', LAST_EVENING_IN_RANGE],
          ].map(([invoice, at]) => ({
            customer: 'cy',
            psp_invoice_id: invoice!,
            decline_code: 'expired_card',
            decline_category: 'card_update_required' as const,
            status: 'in_flight' as const,
            first_failed_at: at!,
          })),
          {
            key: 'open',
            customer: 'ann',
            psp_invoice_id: 'in_open',
            decline_code: 'authentication_required',
            decline_category: 'authentication_required',
            status: 'in_flight',
            first_failed_at: daysAgo(1),
          },
        ],
        cancel_sessions: [
          {
            key: 'session',
            customer: 'ann',
            subscription: 'ann-sub',
            outcome: 'canceled',
            reason_code: 'missing_features',
            feedback: 'Needs <b>SSO</b>\nand an export.',
            created_at: daysAgo(2),
            ended_at: daysAgo(2),
          },
        ],
        webhooks: [
          { key: 'hook', name: 'Initech CRM', url: world.current.receiver.url(HOOK_PATH), events: ['recovery.lost'] },
        ],
      },
    ],
  });
  const ids = loaded.workspaces.initech!;
  globex = { ownerEmail: 'owner@globex.test', customerId: loaded.workspaces.globex!.customers.g! };
  initech = {
    id: ids.id,
    markMeId: ids.campaigns.markme!,
    openId: ids.campaigns.open!,
    hookId: ids.webhooks.hook!.id,
    hookSecret: ids.webhooks.hook!.secret,
    customerId: ids.customers.ann!,
    sessionId: ids.cancel_sessions.session!,
  };
  world.current.receiver.route(HOOK_PATH, {
    secret: initech.hookSecret,
    behaviour: { kind: 'status', status: 200, body: 'ok' },
  });
  await setPassword('owner@globex.test', 'Gil Globex');
  await setPassword('owner@initech.test', 'Bill Lumbergh');
  await setPassword('member@initech.test', 'Milton Waddams');
  await setPassword('owner@hooli.test', 'Gavin Belson');
  await setPassword('owner@vandelay.test', 'Art Vandelay');
  await setPassword('owner@soylent.test', 'Sol Soylent');
}, 60_000);

afterAll(async () => {
  await Promise.all(contexts.map((context) => context.close()));
  contexts = [];
});

/** Each person's signed-in cookies, from their first sign-in: later pages reuse the session. */
const sessions = new Map<string, Awaited<ReturnType<BrowserContext['storageState']>>>();

/**
 * A page of its own context, signed in as `email` and showing `path` under /dashboard (the
 * Overview unless told). Only the first page for a person goes through the sign-in form
 * (settings-flows tests signing in itself); the others start with that session's cookie and
 * open `path` at once, a sign-in's and an Overview's worth of time less each.
 */
async function signIn(
  email: string,
  { timezoneId, path, viewport = { width: 1280, height: 900 }, locale }: SignInOptions = {},
): Promise<Page> {
  const context = await world.current.browser.newContext({
    viewport,
    acceptDownloads: true,
    ...(timezoneId && { timezoneId }),
    ...(locale && { locale }),
    ...(sessions.has(email) && { storageState: sessions.get(email) }),
  });
  contexts.push(context);
  const page = await context.newPage();
  page.setDefaultTimeout(10_000);
  if (!sessions.has(email)) {
    await signInThroughForm(page, world.current.url, email);
    sessions.set(email, await context.storageState());
    if (!path) return page;
  }
  await page.goto(`${world.current.url}/dashboard${path ?? '/'}`);
  await page.getByRole('heading', { level: 1, ...(!path && { name: 'Overview' }) }).waitFor();
  return page;
}

interface SignInOptions {
  /** The browser's time zone (the machine's unless told). */
  timezoneId?: string;
  /**
   * The page to open under /dashboard once signed in, e.g. `/campaigns` (the Overview unless told).
   */
  path?: string;
  viewport?: { width: number; height: number };
  /** The browser's language (`de-DE`, `en-IN`), the machine's unless told. */
  locale?: string;
}

async function cookieHeader(page: Page): Promise<string> {
  return (await page.context().cookies()).map((cookie) => `${cookie.name}=${cookie.value}`).join('; ');
}

const loaded = (page: Page) => page.getByRole('status').filter({ hasText: 'Loading' }).waitFor({ state: 'detached' });

/**
 * Waits until `read` gives `expected` (10 s at most unless told), then asserts it, showing the last
 * value read.
 */
async function settlesTo<T>(read: () => Promise<T>, expected: T, timeoutMs?: number): Promise<void> {
  let last: T | undefined;
  await eventually(async () => {
    last = await read();
    return JSON.stringify(last) === JSON.stringify(expected);
  }, timeoutMs).catch(() => undefined);
  expect(last).toEqual(expected);
}

/** The line under the KPI cards that names the exchange rates the page converted with. */
function ratesLine(page: Page): Promise<string | null> {
  return page
    .getByRole('region', { name: 'Key figures' })
    .getByText(/^Amounts in other currencies/)
    .textContent();
}

/**
 * The KPI cards as { label: value }, read through their roles (a <dl>: terms and definitions);
 * a card whose figure says what it is of under it reads `value (detail)`.
 */
async function kpis(page: Page): Promise<Record<string, string>> {
  const figures = page.getByRole('region', { name: 'Key figures' });
  await figures.getByRole('definition').first().waitFor();
  const cards = await figures.getByRole('term').evaluateAll((terms) =>
    terms.map((term) => {
      const [value, detail] = [...term.parentElement!.querySelectorAll('dd')].map((dd) => dd.textContent);
      return [term.textContent, detail ? `${value} (${detail})` : value];
    }),
  );
  return Object.fromEntries(cards);
}

/** The KPI cards' figures alone, { label: value }, without what each is of. */
function kpiValues(page: Page): Promise<Record<string, string>> {
  return definitions(page.getByRole('region', { name: 'Key figures' }));
}

/** The body rows of the page's table, each as its cells' texts. */
/** A select's options as [value, text] pairs, in order. */
function optionsOf(select: Locator): Promise<string[][]> {
  return select
    .locator('option')
    .evaluateAll((options) => options.map((option) => [option.getAttribute('value') ?? '', option.textContent ?? '']));
}

async function tableRows(page: Page | Locator, name: string): Promise<string[][]> {
  const table = page.getByRole('table', { name });
  await table.waitFor();
  const rows = table.getByRole('row');
  const count = await rows.count();
  // The rows read side by side, not one round trip to the browser after another: 50 rows took a second.
  return Promise.all(
    Array.from({ length: count - 1 }, (_, index) =>
      rows
        .nth(index + 1)
        .getByRole('cell')
        .allTextContents(),
    ),
  );
}

describe('overview', () => {
  let page: Page;

  beforeAll(async () => {
    page = await signIn(globex.ownerEmail);
  });

  it('shows the last 30 days by default, numbers computed by hand, and names the currency it cannot convert', async () => {
    await expect(kpis(page)).resolves.toEqual({
      // Each rate says what it is of: 100% of closed beside open campaigns read as the result.
      // Each card names what it counts: the campaigns opened (sessions started) in the period.
      'Recovery rate of closed campaigns': '66.7% (2 recovered of 3 closed campaigns opened in the last 30 days)', // the 60-day-old one is outside
      'Recovered so far, of all campaigns': '40.0% (2 of 5 campaigns opened in the last 30 days; 2 still open)',
      'Recovered revenue': '$200.00 (2 campaigns recovered, of those opened in the last 30 days)', // USD 100.00 + EUR 92.00
      'Revenue at risk': '$100.00 (2 campaigns still open, of those opened in the last 30 days)', // JPY 15,000; THB left out
      'Lost revenue': '$50.00 (1 campaign lost or abandoned, of those opened in the last 30 days)',
      'Save rate': '66.7% (2 saved of 3 sessions started in the last 30 days that ended saved or canceled)', // the 40-day-old cancel is outside
      'Saved MRR': '$80.00 (2 sessions saved, of those started in the last 30 days)', // USD 30.00 + EUR 46.00
      'Median time to recover': '2 days (over 2 campaigns recovered, of those opened in the last 30 days)', // of 1 and 3 days
    });
    await expect(page.getByRole('note').textContent()).resolves.toMatch(/Amounts in THB have no exchange rate/);
    // The period's first day as every other date on the page reads ("Oct 30, 2026"), not ISO, and
    // still said to be a UTC day.
    const { since } = (await (
      await fetch(`${world.current.url}/dashboard/api/overview`, { headers: { cookie: await cookieHeader(page) } })
    ).json()) as { since: string };
    const day = new Intl.DateTimeFormat('en-US', { month: 'short', day: 'numeric', year: 'numeric', timeZone: 'UTC' });
    await expect(
      page
        .getByRole('region', { name: 'Key figures' })
        .getByText(/^Last 30 days \(/)
        .textContent(),
    ).resolves.toBe(
      `Last 30 days (campaigns opened and cancel sessions started since ${day.format(new Date(`${since}T00:00:00Z`))}, ` +
        'UTC), in USD.',
    );
    await expect(
      page
        .getByRole('region', { name: 'Key figures' })
        .getByText(/^Closed campaigns are/)
        .textContent(),
    ).resolves.toBe(
      'Closed campaigns are those recovered, lost or abandoned; an open one counts in the first rate once it closes. ' +
        'Every figure counts campaigns by the day their first payment failed and cancel sessions by the day they started, ' +
        'whenever they closed: a campaign lost in this period that opened before it is counted in its own period.',
    );
  });

  it('rounds each percentage once, from its counts, so it agrees with them', async () => {
    const vandelay = await signIn('owner@vandelay.test');
    const figures = await kpis(vandelay);
    expect(figures).toMatchObject({
      'Recovery rate of closed campaigns': '54.5% (6 recovered of 11 closed campaigns opened in the last 30 days)',
      'Recovered so far, of all campaigns': '54.5% (6 of 11 campaigns opened in the last 30 days; 0 still open)',
      'Save rate': '54.5% (6 saved of 11 sessions started in the last 30 days that ended saved or canceled)',
    });
    // The API's rate is the same ratio to 4 places: rounding it again is what read 54.6%.
    const stats = (await (
      await fetch(`${world.current.url}/dashboard/api/stats`, { headers: { cookie: await cookieHeader(vandelay) } })
    ).json()) as { recovery: { recovery_rate: number }; cancel_flow: { save_rate: number } };
    expect([stats.recovery.recovery_rate, stats.cancel_flow.save_rate]).toEqual([0.5455, 0.5455]);
    const rate = vandelay.getByRole('figure', { name: 'Recovery rate by month' });
    await rate.getByText('Show as a table').click();
    await expect(tableRows(rate, 'Recovery rate by month')).resolves.toContainEqual(['54.5% (6 of 11 closed)']);
  });

  it('says so in place of every chart when a new workspace has nothing to draw, rather than an axis of hundredths of a cent', async () => {
    const empty = await signIn('owner@hooli.test');
    const figures = empty.getByRole('figure');
    await figures.first().waitFor();
    const charts = await figures.count();
    expect(charts).toBeGreaterThan(0);
    // Cancellation reasons has its own words for it.
    await expect(
      figures.filter({ hasText: /Nothing in this period yet\.|No cancel sessions in this period\./ }).count(),
    ).resolves.toBe(charts);
    await expect(empty.getByRole('img', { name: /: chart;/ }).count()).resolves.toBe(0);
  });

  it('all time equals the stats of the API, and every chart has its table', async () => {
    await page.getByLabel('Period').selectOption({ label: 'All time' });
    await page.getByText('All time, in USD.').waitFor();
    expect(new URL(page.url()).searchParams.get('period')).toBe('all_time');
    await expect(kpis(page)).resolves.toEqual({
      'Recovery rate of closed campaigns': '75.0% (3 recovered of 4 closed campaigns opened at any time)',
      'Recovered so far, of all campaigns': '50.0% (3 of 6 campaigns opened at any time; 2 still open)',
      'Recovered revenue': '$400.00 (3 campaigns recovered, of those opened at any time)',
      'Revenue at risk': '$100.00 (2 campaigns still open, of those opened at any time)',
      'Lost revenue': '$50.00 (1 campaign lost or abandoned, of those opened at any time)',
      'Save rate': '50.0% (2 saved of 4 sessions started at any time that ended saved or canceled)',
      'Saved MRR': '$80.00 (2 sessions saved, of those started at any time)',
      'Median time to recover': '2 days (over 3 campaigns recovered, of those opened at any time)', // of 1, 2 and 3 days
    });
    const stats = (await (
      await fetch(`${world.current.url}/dashboard/api/stats`, { headers: { cookie: await cookieHeader(page) } })
    ).json()) as { recovery: { recovered_amount_cents: number; recovery_rate: number } };
    expect(stats.recovery).toMatchObject({ recovered_amount_cents: 40_000, recovery_rate: 0.75 });

    const charts = page.getByRole('figure');
    await expect(charts.count()).resolves.toBe(6);
    for (const name of [
      'Failed and recovered revenue by month (USD)',
      'Recovery rate by month',
      'Campaigns by decline category',
      'How campaigns were recovered',
      'Cancel sessions by outcome by month',
      'Cancellation reasons',
    ]) {
      const chart = page.getByRole('figure', { name });
      await expect(chart.getByRole('img').count()).resolves.toBe(1);
    }
    // Each month's rate says what it is of: 100% of 1 closed campaign is not 100% of 40.
    const rate = page.getByRole('figure', { name: 'Recovery rate by month' });
    await rate.getByText('Show as a table').click();
    const closedByMonth = new Map<string, { recovered: number; closed: number }>();
    for (const [days, status] of [
      [2, 'recovered'],
      [5, 'recovered'],
      [60, 'recovered'],
      [10, 'lost'],
    ] as const) {
      const month = daysAgo(days).slice(0, 7);
      const counts = closedByMonth.get(month) ?? { recovered: 0, closed: 0 };
      closedByMonth.set(month, {
        recovered: counts.recovered + (status === 'recovered' ? 1 : 0),
        closed: counts.closed + 1,
      });
    }
    const monthName = new Intl.DateTimeFormat('en-US', { month: 'short', year: 'numeric', timeZone: 'UTC' });
    const rateCells = Object.fromEntries(
      (await tableRows(rate, 'Recovery rate by month')).map((cells, index) => [index, cells[0]]),
    );
    const rateMonths = await rate.getByRole('rowheader').allTextContents();
    const withNotes = Object.fromEntries(
      rateMonths.map((month, index) => [month, rateCells[index]]).filter(([, cell]) => cell !== '—'),
    );
    expect(withNotes).toEqual(
      Object.fromEntries(
        [...closedByMonth].map(([month, { recovered, closed }]) => [
          monthName.format(new Date(`${month}-01T00:00:00Z`)),
          `${(Math.round((1000 * recovered) / closed) / 10).toFixed(1)}% (${recovered} of ${closed} closed)`,
        ]),
      ),
    );
    const via = page.getByRole('figure', { name: 'How campaigns were recovered' });
    await via.getByText('Show as a table').click();
    await expect(tableRows(via, 'How campaigns were recovered')).resolves.toEqual([['1'], ['1'], ['0'], ['1']]);
    await expect(via.getByRole('rowheader').allTextContents()).resolves.toEqual([
      'Retry',
      'Card update',
      'Spontaneous',
      'Manual',
    ]);
    const reasons = page.getByRole('figure', { name: 'Cancellation reasons' });
    await reasons.getByText('Show as a table').click();
    // Every chart's labels in sentence case, as "Retry" and "Card update" above (they were "too
    // expensive", "soft", "saved discount"), in the words the lists and filters use (labels.ts).
    await expect(reasons.getByRole('rowheader').allTextContents()).resolves.toEqual([
      'Too expensive',
      'Missing features',
      'Switched to another service',
    ]);
    const categories = page.getByRole('figure', { name: 'Campaigns by decline category' });
    await categories.getByText('Show as a table').click();
    await expect(categories.getByRole('rowheader').allTextContents()).resolves.toEqual([
      'Soft decline',
      'Card update required',
      'Authentication required',
      'Authorization revoked',
      'Fraud risk',
      'Unknown',
    ]);
    const outcomes = page.getByRole('figure', { name: 'Cancel sessions by outcome by month' });
    await outcomes.getByText('Show as a table').click();
    await expect(outcomes.getByRole('columnheader').allTextContents()).resolves.toEqual([
      'Month',
      'Saved with a discount',
      'Saved with a pause',
      'Saved with a downgrade',
      'Saved another way',
      'Canceled',
      'Abandoned',
    ]);
  });
  it('says which exchange rates its money was converted with, in plain words: the built-in ones, approximate', async () => {
    await page.goto(`${world.current.url}/dashboard/`);
    await expect(ratesLine(page)).resolves.toBe(
      "Amounts in other currencies are converted to USD at one fixed rate per currency, not at the rate of each payment's " +
        'date. Units of each currency to 1 US dollar: EUR 0.92 and JPY 150 (standard rates built into the service, approximate).',
    );
    // A workspace that converted nothing has no rates to name.
    const vandelay = await signIn('owner@vandelay.test');
    await kpis(vandelay);
    await expect(vandelay.getByText(/^Amounts in other currencies/).count()).resolves.toBe(0);
  });

  it("names each chart of the chosen period with it, in the picker's words, and each table disclosure with its chart", async () => {
    await page.goto(`${world.current.url}/dashboard/`);
    await kpis(page);
    const named = async (period: string) => {
      for (const name of ['Campaigns by decline category', 'How campaigns were recovered', 'Cancellation reasons']) {
        const chart = page.getByRole('figure', { name: `${name}, ${period}`, exact: true });
        expect({ name, period, count: await chart.count() }).toEqual({ name, period, count: 1 });
        await expect(chart.getByText(period, { exact: true }).isVisible()).resolves.toBe(true);
      }
      // The monthly ones cover the last 12 months whatever the period, and say so once above them.
      for (const name of ['Failed and recovered revenue by month (USD)', 'Recovery rate by month']) {
        await expect(page.getByRole('figure', { name, exact: true }).count()).resolves.toBe(1);
      }
    };
    await named('Last 30 days');
    // What a screen reader hears of each "Show as a table": its chart's name, six different names.
    const cdp = await page.context().newCDPSession(page);
    const { nodes } = await cdp.send('Accessibility.getFullAXTree').finally(() => cdp.detach());
    const summaries = nodes
      .filter((node) => !node.ignored && node.role?.value === 'DisclosureTriangle')
      .map((node) => String(node.name?.value ?? ''));
    expect(summaries).toEqual([
      'Show as a table: Failed and recovered revenue by month (USD)',
      'Show as a table: Recovery rate by month',
      'Show as a table: Campaigns by decline category, Last 30 days',
      'Show as a table: How campaigns were recovered, Last 30 days',
      'Show as a table: Cancel sessions by outcome by month',
      'Show as a table: Cancellation reasons, Last 30 days',
    ]);
    await page.getByLabel('Period').selectOption({ label: 'All time' });
    await page.getByText('All time, in USD.').waitFor();
    await named('All time');
    // A new workspace's cancellation reasons, none, name the period too.
    const empty = await signIn('owner@hooli.test');
    await empty.getByRole('figure', { name: 'Cancellation reasons, Last 30 days', exact: true }).waitFor();
  });

  it('says plainly that a period the address names is unknown and which one it shows, until it is cleared', async () => {
    const shared = await signIn(globex.ownerEmail, { path: '/?period=bogus' });
    const problem = shared.getByRole('alert').filter({ hasText: 'period' });
    await expect(problem.textContent()).resolves.toBe(
      'The address asks for period “bogus”, which the Overview does not have, so it shows the last 30 days.',
    );
    await shared
      .getByRole('region', { name: 'Key figures' })
      .getByText(/^Last 30 days \(/)
      .waitFor();
    const picker = shared.getByLabel('Period');
    await expect(picker.inputValue()).resolves.toBe('last_30_days');
    // The sentence, Clear period and the rates' line pass axe and fit a 390 px phone.
    await expect(checkPage(shared, 'overview-unknown-period')).resolves.toEqual([]);
    // The picker is described by the sentence, for one who reaches it first.
    await expect(
      picker.evaluate(
        (select) => select.ownerDocument.getElementById(select.getAttribute('aria-describedby') ?? '')?.textContent,
      ),
    ).resolves.toMatch(/^The address asks for period “bogus”/);
    await shared.getByRole('button', { name: 'Clear period' }).click();
    await problem.waitFor({ state: 'detached' });
    expect(new URL(shared.url()).searchParams.has('period')).toBe(false);
    await expect(picker.getAttribute('aria-describedby')).resolves.toBeNull();
    // Another period from the picker replaces it as well.
    await shared.goto(`${world.current.url}/dashboard/?period=forever`);
    await problem.waitFor();
    await picker.selectOption({ label: 'Last 90 days' });
    await problem.waitFor({ state: 'detached' });
    expect(new URL(shared.url()).searchParams.get('period')).toBe('last_90_days');
  });

  it('"This month" is a UTC calendar month, chosen by role and name, its cards counting what opened in it', async () => {
    const monthly = await signIn(globex.ownerEmail);
    await monthly.getByRole('combobox', { name: 'Period' }).selectOption({ label: 'This month' });
    await monthly
      .getByRole('region', { name: 'Key figures' })
      .getByText(/^This month \(/)
      .waitFor();
    expect(new URL(monthly.url()).searchParams.get('period')).toBe('this_month');
    const month = new Date(now).toISOString().slice(0, 7);
    const monthName = new Intl.DateTimeFormat('en-US', { month: 'short', year: 'numeric', timeZone: 'UTC' });
    await expect(
      monthly
        .getByRole('region', { name: 'Key figures' })
        .getByText(/^This month \(/)
        .textContent(),
    ).resolves.toBe(
      `This month (campaigns opened and cancel sessions started in ${monthName.format(new Date(`${month}-01T00:00:00Z`))} so far, UTC), in USD.`,
    );
    // Globex's campaigns opened this UTC month, counted from the fixture's days (some of them fall in
    // last month early in a month).
    const globexDays = [2, 5, 60, 1, 4, 10];
    const recoveredDays = [2, 5, 60];
    const inMonth = (days: number) => daysAgo(days).slice(0, 7) === month;
    const opened = globexDays.filter(inMonth).length;
    const recovered = recoveredDays.filter(inMonth).length;
    const open = [1, 4].filter(inMonth).length;
    const plural = (count: number) => `${count} ${count === 1 ? 'campaign' : 'campaigns'}`;
    await expect(kpis(monthly)).resolves.toMatchObject({
      'Recovered so far, of all campaigns': expect.stringMatching(
        new RegExp(`\\(${recovered} of ${plural(opened)} opened this month; ${open} still open\\)$`),
      ),
    });
    // Its charts are named after it, as every period's.
    await monthly.getByRole('figure', { name: 'Campaigns by decline category, This month', exact: true }).waitFor();
    // Last month is the other calendar month.
    await monthly.getByRole('combobox', { name: 'Period' }).selectOption({ label: 'Last month' });
    await monthly.getByText(/^Last month \(campaigns opened and cancel sessions started in /).waitFor();
    expect(new URL(monthly.url()).searchParams.get('period')).toBe('last_month');
  });

  it('a custom range is its UTC days, both included, picked in two date fields and kept in the address', async () => {
    const ranged = await signIn(globex.ownerEmail);
    await ranged.getByRole('combobox', { name: 'Period' }).selectOption({ label: 'Custom range' });
    // It starts as this UTC month so far.
    const today = new Date().toISOString().slice(0, 10);
    await expect(ranged.getByLabel('From (UTC day)').inputValue()).resolves.toBe(`${today.slice(0, 8)}01`);
    await expect(ranged.getByLabel('To (UTC day, included)').inputValue()).resolves.toBe(today);
    // The last 30 days' campaigns of Globex were opened 1, 2, 4, 5 and 10 days ago: a range of the
    // 11 days up to today holds them all, one of the 3 days up to today those of 1 and 2 days ago.
    const day = (days: number) => daysAgo(days).slice(0, 10);
    await ranged.getByLabel('From (UTC day)').fill(day(2));
    await ranged.getByLabel('To (UTC day, included)').fill(day(0));
    const address = () => Promise.resolve(Object.fromEntries(new URL(ranged.url()).searchParams));
    await settlesTo(address, { period: 'custom', from: day(2), to: day(0) });
    const inRange = [1, 2, 4, 5, 10].filter((days) => day(days) >= day(2)).length;
    await settlesTo(
      async () =>
        (await kpis(ranged))['Recovered so far, of all campaigns']?.match(/of (\d+) campaigns? opened from /)?.[1],
      String(inRange),
    );
    // A range whose first day is after its last shows the default period, and says why.
    await ranged.getByLabel('From (UTC day)').fill(day(0));
    await ranged.getByLabel('To (UTC day, included)').fill(day(2));
    await ranged.getByRole('alert').filter({ hasText: 'custom range needs a first and a last day' }).waitFor();
  });

  it('on a phone reads each decline category one figure to a line, and the range under Period, its days side by side', async () => {
    const phone = await signIn(globex.ownerEmail);
    for (const width of [390, 320]) {
      await phone.setViewportSize({ width, height: 900 });
      await phone.goto(`${world.current.url}/dashboard/`);
      const table = phone
        .getByRole('region', { name: 'Why payments fail' })
        .getByRole('table', { name: 'Decline categories' });
      await table.getByRole('row').nth(1).waitFor();
      await settlesTo(() => table.getAttribute('class'), 'chart-stacked');
      await screenshot(phone, `decline-categories-${width}`);
      // Each figure on a line of its own under the row's name, and "$200.00 (2 recovered)" on one
      // line: in the charts' columns of 8.5rem it took three beside an empty right half.
      const rows = await table.locator('tbody tr').evaluateAll((trs) =>
        trs.map((tr) => ({
          tops: [...tr.querySelectorAll('td')].map((td) => Math.round(td.getBoundingClientRect().top)),
          recoveredLines: tr.querySelector('td:last-child span')!.getClientRects().length,
        })),
      );
      for (const row of rows) {
        expect({ width, ordered: row.tops.every((top, i) => i === 0 || top > row.tops[i - 1]!) }).toEqual({
          width,
          ordered: true,
        });
        expect({ width, recoveredLines: row.recoveredLines }).toEqual({ width, recoveredLines: 1 });
      }
    }
    // The custom range: Period on its row, From and To side by side under it, their labels level;
    // at 1280 px all three in one row, their labels level (the date boxes are taller than the select).
    const labelTops = async () =>
      Object.fromEntries(
        await phone
          .locator('.page-header label > span')
          .evaluateAll((spans) =>
            spans.map((span) => [span.textContent, Math.round(span.getBoundingClientRect().top)]),
          ),
      ) as Record<string, number>;
    await phone.setViewportSize({ width: 390, height: 900 });
    await phone.goto(`${world.current.url}/dashboard/?period=custom&from=2026-01-01&to=2026-01-31`);
    await phone.getByLabel('To (UTC day, included)').waitFor();
    await screenshot(phone, 'custom-range-390');
    const narrow = await labelTops();
    expect(narrow['From (UTC day)']).toBe(narrow['To (UTC day, included)']);
    expect(narrow['From (UTC day)']).toBeGreaterThan(narrow['Period'] ?? Infinity);
    await expect(
      phone.evaluate<number>('document.documentElement.scrollWidth - window.innerWidth'),
    ).resolves.toBeLessThanOrEqual(0);
    await phone.setViewportSize({ width: 1280, height: 900 });
    await settlesTo(async () => new Set(Object.values(await labelTops())).size, 1);
  });

  it('says why payments fail with their money, each decline category a link to the Campaigns list of it and the period', async () => {
    const why = await signIn(globex.ownerEmail);
    const section = why.getByRole('region', { name: 'Why payments fail' });
    const categories = section.getByRole('table', { name: 'Decline categories' });
    await categories.getByRole('row').nth(1).waitFor();
    // Globex's campaigns have the fixture's decline code, generic_decline: a soft decline. Of the
    // last 30 days: USD 100 + EUR 92 (USD 100) + JPY 15,000 (USD 100) + USD 50, THB left out.
    await expect(tableRows(section, 'Decline categories')).resolves.toEqual([
      ['5', '$350.00', '$200.00 (2 recovered)'],
    ]);
    await expect(tableRows(section, 'Top decline codes')).resolves.toEqual([['5', '$350.00']]);
    await expect(
      section.getByRole('table', { name: 'Top decline codes' }).getByRole('rowheader').textContent(),
    ).resolves.toBe('Declined by the bank generic_decline');
    // At 1280 px each is a table of columns, its last figure inside its box: side by side, the
    // categories stacked at half the card's width and cut "(16 recovered)" at its edge.
    for (const name of ['Decline categories', 'Top decline codes']) {
      const table = section.getByRole('table', { name });
      await expect(table.getAttribute('class')).resolves.not.toBe('chart-stacked');
      await expect(
        table.evaluate((element) => {
          const box = element.parentElement!.getBoundingClientRect();
          return Array.from(element.querySelectorAll('td') as unknown as ArrayLike<typeof element>).every(
            (cell) => cell.getBoundingClientRect().right <= box.right + 0.5,
          );
        }),
      ).resolves.toBe(true);
    }
    const { since } = (await (
      await fetch(`${world.current.url}/dashboard/api/overview`, { headers: { cookie: await cookieHeader(why) } })
    ).json()) as { since: string };
    await categories.getByRole('link', { name: 'Soft decline' }).click();
    await why.getByRole('heading', { level: 1, name: 'Campaigns' }).waitFor();
    const address = new URL(why.url());
    expect(address.pathname).toBe('/dashboard/campaigns');
    expect(Object.fromEntries(address.searchParams)).toEqual({ decline_category: 'soft', from: since, tz: 'UTC' });
    // The list shows the category's campaigns of those UTC days: the five the Overview counted.
    const list = why.getByRole('table', { name: 'Recovery campaigns' });
    await list.getByRole('row').nth(1).waitFor();
    await settlesTo(() => list.locator('tbody tr').count(), 5);
    await expect(why.getByLabel('Decline category').inputValue()).resolves.toBe('soft');
  });

  it('gives every chart, the closed figures and the decline breakdown a heading, so a screen reader moves between them, the figures keeping their names', async () => {
    await page.goto(`${world.current.url}/dashboard/?period=all_time`);
    await kpis(page);
    await expect(page.getByRole('heading', { level: 2 }).allTextContents()).resolves.toEqual([
      // The cohort cards and the closed figures, each group headed by its basis.
      'Opened at any time',
      'Closed at any time',
      'Why payments fail',
      'Failed and recovered revenue by month (USD)',
      'Recovery rate by month',
      'Campaigns by decline category',
      'How campaigns were recovered',
      'Cancel sessions by outcome by month',
      'Cancellation reasons',
    ]);
    await page.getByRole('figure', { name: 'Campaigns by decline category, All time', exact: true }).waitFor();
    // A month's rate over fewer than 5 closed campaigns is drawn hollow, and the chart says so.
    await expect(
      page
        .getByRole('figure', { name: 'Recovery rate by month' })
        .getByText(/A hollow point is a month with fewer than 5 closed/)
        .count(),
    ).resolves.toBe(1);
  });

  /** One page for the four widths, each loading the Overview afresh at its width. */
  let charts: Page | undefined;

  describe.each([320, 390, 801, 1280])('at %i px', (width) => {
    let sized: Page;

    beforeAll(async () => {
      sized = charts ??= await signIn(globex.ownerEmail, { path: '/?period=all_time' });
      await sized.setViewportSize({ width, height: 900 });
      await sized.goto(`${world.current.url}/dashboard/?period=all_time`); // every cancellation reason
      await sized.getByRole('figure').first().getByRole('img').waitFor();
      await sized.evaluate('new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)))');
    });

    it('draws every label of the vertical charts inside the chart, none cut at an edge', async () => {
      const vertical = sized.getByRole('figure', { name: /by month|How campaigns were recovered/ });
      await expect(vertical.count()).resolves.toBe(4);
      // A canvas has no boxes to measure: a label cut at the chart's edge leaves ink in its
      // outermost column of pixels. Only below the plot, where the month labels are (bars and
      // grid lines may touch the edge above it): below the lowest row with one unbroken line of
      // ink across half the width or more, the axis (legend and labels are broken by gaps).
      const cut = await vertical.getByRole('img').evaluateAll((canvases) =>
        canvases.flatMap((canvas) => {
          const { width, height } = canvas;
          const pixels = canvas.getContext('2d').getImageData(0, 0, width, height).data;
          const inked = (x: number, y: number) => pixels[(y * width + x) * 4 + 3] > 0;
          const longestLine = (y: number) => {
            let longest = 0;
            for (let x = 0, run = 0; x < width; x += 1) {
              run = inked(x, y) ? run + 1 : 0;
              longest = Math.max(longest, run);
            }
            return longest;
          };
          let axis = height - 1;
          while (axis > 0 && longestLine(axis) < width / 2) axis -= 1;
          const edges: string[] = [];
          for (let y = axis + 1; y < height; y += 1) {
            if (inked(0, y)) edges.push(`left at y ${y}`);
            if (inked(width - 1, y)) edges.push(`right at y ${y}`);
          }
          return edges.length ? [`${canvas.getAttribute('aria-label')}: ${edges.join(', ')} (axis at y ${axis})`] : [];
        }),
      );
      expect(cut).toEqual([]);
    });

    // At 390 px the six outcomes' legend took most of the 240 px box and left the stacked bars
    // about 40 px, lower than the legend. The plot is measured as the span of its horizontal grid
    // lines (the y axis's, from the top tick to the axis): rows of ink across half the canvas or more.
    it('Cancel sessions by outcome by month: its plot is at least 145 px tall whatever its legend takes', async () => {
      const canvas = sized.getByRole('figure', { name: 'Cancel sessions by outcome by month' }).getByRole('img');
      const plotHeight = () =>
        canvas.evaluate((element) => {
          const { width, height } = element;
          const pixels = element.getContext('2d')!.getImageData(0, 0, width, height).data;
          const lines: number[] = [];
          for (let y = 0; y < height; y += 1) {
            let longest = 0;
            for (let x = 0, run = 0; x < width; x += 1) {
              run = pixels[(y * width + x) * 4 + 3]! > 0 ? run + 1 : 0;
              longest = Math.max(longest, run);
            }
            if (longest >= width / 2) lines.push(y);
          }
          const scale = height / element.getBoundingClientRect().height;
          return lines.length < 2 ? 0 : Math.round((lines.at(-1)! - lines[0]!) / scale);
        });
      // Chart.js draws again at the grown height on its next frame.
      await eventually(async () => (await plotHeight()) >= 145).catch(() => undefined);
      const plot = await plotHeight();
      expect({ width, plot, tallEnough: plot >= 145 }).toEqual({ width, plot, tallEnough: true });
    });

    // The table under the decline chart (two series) scrolled sideways in its box at 320 px, and
    // at 801 px in the two-column grid beside the side navigation.
    it('Campaigns by decline category: its table fits its box, nothing scrolling sideways', async () => {
      const figure = sized.getByRole('figure', { name: 'Campaigns by decline category' });
      await figure.getByText('Show as a table').click();
      const table = figure.getByRole('table', { name: 'Campaigns by decline category' });
      await table.waitFor();
      const fit = await table.evaluate((element) => {
        const box = element.parentElement!;
        return {
          table: element.scrollWidth - element.clientWidth,
          box: box.scrollWidth - box.clientWidth,
          beyondBox: Math.round(element.getBoundingClientRect().right - box.getBoundingClientRect().right),
          page: element.ownerDocument.documentElement.scrollWidth - element.ownerDocument.documentElement.clientWidth,
        };
      });
      expect({ width, ...fit }).toEqual({ width, table: 0, box: 0, beyondBox: expect.any(Number), page: 0 });
      expect(fit.beyondBox).toBeLessThanOrEqual(0);
      // Stacked exactly where it would not fit as a table (useStacked, as the lists): at 320 px, and
      // at 801 px in the two-column grid beside the side navigation; a table of three columns at
      // 390 and 1280 px, where it fits.
      const layout = await table
        .locator('thead')
        .evaluate((thead) => (thead.getBoundingClientRect().height > 1 ? 'table' : 'stacked'));
      expect({ width, layout }).toEqual({ width, layout: width === 320 || width === 801 ? 'stacked' : 'table' });
      // Still a table read with its headers: every category, each with its two figures.
      await expect(table.getByRole('rowheader').count()).resolves.toBe(6);
      await expect(table.getByRole('columnheader').allTextContents()).resolves.toEqual([
        'Decline category',
        'Opened',
        'Recovered',
      ]);
    });

    // A row's header (a category, a month) reads as body text, not in the column headers' small
    // grey capitals: as a table (the categories at 390 and 1280 px) beside the column headers,
    // which keep them, and stacked (the categories at 320 and 801 px, the outcomes at every width),
    // on a line of its own above its figures.
    it.each(['Campaigns by decline category', 'Cancel sessions by outcome by month'])(
      '%s: its row headers read as body text, its column headers as headers',
      async (name) => {
        const figure = sized.getByRole('figure', { name });
        const table = figure.getByRole('table', { name });
        if (!(await table.isVisible())) await figure.getByText('Show as a table').click();
        await table.getByRole('rowheader').first().waitFor();
        const seen = await table.evaluate((element) => {
          const view = element.ownerDocument.defaultView!;
          const looks = (cell: Parameters<typeof view.getComputedStyle>[0]) => {
            const style = view.getComputedStyle(cell);
            return {
              case: style.textTransform,
              color: style.color,
              size: style.fontSize,
              spacing: style.letterSpacing,
            };
          };
          const row = element.querySelector('tbody tr')!;
          const rowHeader = row.querySelector('th')!;
          const figure = row.querySelector('td')!;
          return {
            stacked: element.querySelector('thead')!.getBoundingClientRect().height <= 1,
            rowHeader: looks(rowHeader),
            body: looks(figure),
            columnHeader: looks(element.querySelector('thead th')),
            headerAboveFigures: rowHeader.getBoundingClientRect().bottom <= figure.getBoundingClientRect().top + 1,
          };
        });
        expect(seen.rowHeader).toEqual(seen.body);
        expect(seen.rowHeader.case).not.toBe('uppercase');
        expect(seen.columnHeader.case).toBe('uppercase');
        expect(seen.columnHeader.color).not.toBe(seen.rowHeader.color);
        const stacks = name !== 'Campaigns by decline category' || width === 320 || width === 801;
        expect({ width, stacked: seen.stacked, headerAboveFigures: seen.headerAboveFigures }).toEqual({
          width,
          stacked: stacks,
          headerAboveFigures: stacks,
        });
      },
    );

    it.each(['Campaigns by decline category', 'Cancellation reasons'])(
      '%s: draws every category label whole, on one line or more, inside the canvas',
      async (name) => {
        const figure = sized.getByRole('figure', { name });
        const labels = await figure.getByRole('rowheader', { includeHidden: true }).allTextContents();
        expect(labels.length).toBeGreaterThan(2);
        await expect(categoryLabelProblems(figure, labels)).resolves.toEqual([]);
      },
    );
  });
});

/**
 * What is wrong with how a horizontal chart draws its category labels, one line each (none when
 * every label is whole). A canvas has no boxes to measure, and ink at its edge alone misses a
 * label cut where a space or a gap between letters meets the edge, so this reads the lines of
 * text as drawn: left of the category axis (the leftmost column of ink unbroken over half the
 * height) and within its height, each run of rows with ink is a line, measured from its leftmost
 * to its rightmost inked pixel. Top to bottom, the lines must spell the labels in order, each line
 * as wide as a run of the label's words set in the chart's font (within 2 px: a line that lost a
 * letter or a word past the edge is narrower than any), and none may touch the edge. A label
 * skipped or drawn twice leaves the lines out of step with the labels.
 */
async function categoryLabelProblems(figure: Locator, labels: string[]): Promise<string[]> {
  // Chart.js's default family, at the tick size Chart.tsx sets.
  const font = "12px 'Helvetica Neue', 'Helvetica', 'Arial', sans-serif";
  return figure.getByRole('img').evaluate(
    (canvas, { labels, font }) => {
      const element = canvas as unknown as {
        width: number;
        height: number;
        clientWidth: number;
        getContext(kind: '2d'): {
          getImageData(x: number, y: number, w: number, h: number): { data: Uint8ClampedArray };
        };
        ownerDocument: {
          createElement(tag: 'canvas'): {
            getContext(kind: '2d'): {
              font: string;
              measureText(text: string): { actualBoundingBoxLeft: number; actualBoundingBoxRight: number };
            };
          };
        };
      };
      const { width, height } = element;
      const perCssPixel = width / element.clientWidth;
      const pixels = element.getContext('2d').getImageData(0, 0, width, height).data;
      const inked = (x: number, y: number) => pixels[(y * width + x) * 4 + 3]! > 0;
      const measure = element.ownerDocument.createElement('canvas').getContext('2d');
      measure.font = font;
      const inkWidth = (text: string) => {
        const metrics = measure.measureText(text);
        return metrics.actualBoundingBoxLeft + metrics.actualBoundingBoxRight;
      };

      // The category axis, and the rows it spans.
      let axis = -1;
      let top = 0;
      let bottom = 0;
      for (let x = 0; x < width && axis < 0; x += 1) {
        for (let y = 0, run = 0; y < height; y += 1) {
          run = inked(x, y) ? run + 1 : 0;
          if (run >= height / 2) {
            axis = x;
            top = y - run + 1;
            while (y + 1 < height && inked(x, y + 1)) y += 1;
            bottom = y;
            break;
          }
        }
      }
      if (axis < 0) return ['no category axis found'];

      // The lines of text left of it: runs of rows with ink. The dot of an i over a word with no
      // tall letter ("service") is a run of its own, a row or two above the rest: it joins the
      // line under it.
      const runs: Array<{ top: number; bottom: number; left: number; right: number }> = [];
      for (let y = top; y <= bottom; y += 1) {
        let left = -1;
        let right = -1;
        for (let x = 0; x < axis - 1; x += 1) {
          if (!inked(x, y)) continue;
          if (left < 0) left = x;
          right = x;
        }
        if (left < 0) continue;
        const last = runs.at(-1);
        if (last && last.bottom === y - 1) {
          last.bottom = y;
          last.left = Math.min(last.left, left);
          last.right = Math.max(last.right, right);
        } else runs.push({ top: y, bottom: y, left, right });
      }
      const joined: typeof runs = [];
      for (const run of runs) {
        const above = joined.at(-1);
        const dot = above && (above.bottom - above.top + 1) / perCssPixel <= 3;
        if (above && dot && (run.top - above.bottom - 1) / perCssPixel <= 2) {
          joined[joined.length - 1] = {
            top: above.top,
            bottom: run.bottom,
            left: Math.min(above.left, run.left),
            right: Math.max(above.right, run.right),
          };
        } else joined.push({ ...run });
      }
      const lines = joined.map((run) => ({
        left: run.left / perCssPixel,
        width: (run.right - run.left + 1) / perCssPixel,
      }));

      // Top to bottom, the lines spell the labels.
      const problems: string[] = [];
      let line = 0;
      for (const label of labels) {
        const words = label.split(' ');
        for (let start = 0; start < words.length;) {
          const drawn = lines[line];
          if (!drawn) {
            problems.push(`"${label}": not drawn (${lines.length} lines of text for ${labels.length} labels)`);
            break;
          }
          line += 1;
          let end = -1;
          for (let stop = words.length; stop > start && end < 0; stop -= 1) {
            if (Math.abs(inkWidth(words.slice(start, stop).join(' ')) - drawn.width) <= 2) end = stop;
          }
          const rest = words.slice(start).join(' ');
          if (end < 0) {
            problems.push(
              `"${label}": a line ${drawn.width.toFixed(1)} px wide at x ${drawn.left.toFixed(1)} is not ` +
                `"${rest}" (${inkWidth(rest).toFixed(1)} px) or the start of it`,
            );
            break; // on to the next label, from the next line
          }
          if (drawn.left < 1) problems.push(`"${label}": a line touches the edge`);
          start = end;
        }
      }
      if (line < lines.length) problems.push(`${lines.length - line} lines of text more than the labels need`);
      return problems;
    },
    { labels, font },
  );
}

/** A description list's pairs, { term: definition }, read through their roles. */
async function definitions(scope: Locator): Promise<Record<string, string>> {
  await scope.getByRole('definition').first().waitFor();
  const pairs = await scope
    .getByRole('term')
    .evaluateAll((terms) => terms.map((term) => [term.textContent, term.nextElementSibling?.textContent]));
  return Object.fromEntries(pairs);
}

/** Intl writes a no-break space between a currency's code and the amount. */
const NBSP = '\u00a0';

describe("the Overview in the browser's language", () => {
  it('names the day the operator set each rate it converted with, as en-IN writes a day', async () => {
    const page = await signIn('owner@soylent.test', { locale: 'en-IN' });
    const set = await world.current.db('fx_rates').whereIn('currency', ['huf', 'iqd']).pluck('updated_at');
    const days = new Set(
      (set as Date[]).map((at) =>
        new Intl.DateTimeFormat('en-IN', { month: 'short', day: 'numeric', year: 'numeric', timeZone: 'UTC' }).format(
          at,
        ),
      ),
    );
    expect(days.size).toBe(1); // set one after the other in beforeAll
    await expect(ratesLine(page)).resolves.toBe(
      "Amounts in other currencies are converted to HUF at one fixed rate per currency, not at the rate of each payment's " +
        `date. Units of each currency to 1 US dollar: HUF 360 and IQD 1,310 (set by your operator on ${[...days][0]}, UTC).`,
    );
    await expect(checkPage(page, 'overview-en-IN')).resolves.toEqual([]);
  });

  it('writes median days to one place at most, a whole number without ".0", in English for a de-DE browser', async () => {
    const page = await signIn('owner@soylent.test', { locale: 'de-DE' });
    await expect(kpiValues(page)).resolves.toMatchObject({ 'Median time to recover': '1 day' });
    await page.getByLabel('Period').selectOption({ label: 'All time' });
    await page.getByText('All time, in HUF.').waitFor();
    await expect(kpiValues(page)).resolves.toMatchObject({ 'Median time to recover': '2.8 days' }); // not 2,75
  });
});

describe("money in the service's ISO 4217 decimals, not the browser's", () => {
  let page: Page;

  beforeAll(async () => {
    page = await signIn('owner@soylent.test');
  });

  it('shows HUF with 2 decimals and IQD with 3 on the Overview, in its charts, lists and detail, and a median as the API rounds it', async () => {
    // Chromium's CLDR digits are 0 for both: HUF 5,795,529 for 5795529 stored minor units.
    await expect(kpiValues(page)).resolves.toMatchObject({
      'Recovered revenue': `HUF${NBSP}57,955.29`,
      'Revenue at risk': `HUF${NBSP}412.21`, // IQD 1,500.000
      'Lost revenue': `HUF${NBSP}0.00`,
      'Median time to recover': '1 day',
    });
    await page.getByLabel('Period').selectOption({ label: 'All time' });
    await page.getByText('All time, in HUF.').waitFor();
    await expect(kpiValues(page)).resolves.toMatchObject({
      'Recovered revenue': `HUF${NBSP}57,956.29`,
      // To one place, as the rates: the API's 2.75 (of 1 and 4.5 days) shown to less precision.
      'Median time to recover': '2.8 days',
    });
    const revenue = page.getByRole('figure', { name: 'Failed and recovered revenue by month (HUF)' });
    await revenue.getByText('Show as a table').click();
    const cells = (await tableRows(revenue, 'Failed and recovered revenue by month (HUF)')).flat();
    expect(cells).toContain(`HUF${NBSP}1.00`); // the 60-day-old campaign's month
    for (const cell of cells) expect(cell).toMatch(new RegExp(`^HUF${NBSP}[\\d,]+\\.\\d\\d$`));

    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Campaigns' }).click();
    await page.getByRole('heading', { level: 1, name: 'Campaigns' }).waitFor();
    await loaded(page);
    const amounts = Object.fromEntries(
      (await tableRows(page, 'Recovery campaigns')).map((cells) => [cells[0], cells[2]]),
    );
    expect(amounts).toEqual({
      in_huf: `HUF${NBSP}57,955.29`,
      in_huf_old: `HUF${NBSP}1.00`,
      in_iqd: `IQD${NBSP}1,500.000`,
    });
    await page.getByRole('link', { name: 'in_iqd' }).click();
    await page.getByRole('heading', { level: 1, name: 'Invoice in_iqd' }).waitFor();
    await expect(definitions(page.getByRole('region', { name: 'Campaign' }))).resolves.toMatchObject({
      Amount: `IQD${NBSP}1,500.000`,
    });
  });
});

describe('campaigns', () => {
  let page: Page;

  beforeAll(async () => {
    page = await signIn('owner@initech.test');
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Campaigns' }).click();
    await page.getByRole('heading', { level: 1, name: 'Campaigns' }).waitFor();
    await loaded(page);
  });

  it('names each filter option in words, its value the API code the address keeps', async () => {
    await expect(optionsOf(page.getByLabel('Status'))).resolves.toEqual([
      ['', 'All'],
      ['in_flight', 'In flight'],
      ['recovered', 'Recovered'],
      ['lost', 'Lost'],
      ['abandoned', 'Abandoned'],
    ]);
    await expect(optionsOf(page.getByLabel('Decline category'))).resolves.toEqual([
      ['', 'All'],
      ['soft', 'Soft decline'],
      ['card_update_required', 'Card update required'],
      ['authentication_required', 'Authentication required'],
      ['revoked', 'Authorization revoked'],
      ['fraud', 'Fraud risk'],
      ['unknown', 'Unknown'],
    ]);
  });

  it('filters by status and decline category, and Load more walks a tie group without repeating or skipping', async () => {
    await page.getByLabel('Status').selectOption('in_flight');
    await page.getByLabel('Decline category').selectOption('soft');
    await settlesTo(async () => (await tableRows(page, 'Recovery campaigns')).length, 50);
    await page.getByRole('button', { name: 'Load more' }).click();
    await settlesTo(async () => (await tableRows(page, 'Recovery campaigns')).length, TIE_SIZE);
    await expect(page.getByRole('button', { name: 'Load more' }).count()).resolves.toBe(0);
    const invoices = (await tableRows(page, 'Recovery campaigns')).map((cells) => cells[0]);
    expect(new Set(invoices).size).toBe(TIE_SIZE);
    expect([...invoices].sort()).toEqual(Array.from({ length: TIE_SIZE }, (_, index) => tieInvoice(index)));
    // The filters are in the address: reloading keeps them.
    const url = new URL(page.url());
    expect(Object.fromEntries(url.searchParams)).toEqual({ status: 'in_flight', decline_category: 'soft' });
  });

  it('lines its filter controls up: fields, selects and the buttons all of one height, each row on one baseline', async () => {
    const controls = await page
      .getByRole('search', { name: 'Filter campaigns' })
      .locator('input, select, button')
      .evaluateAll((elements) =>
        elements.map((element) => {
          const box = element.getBoundingClientRect();
          return { height: Math.round(box.height), bottom: Math.round(box.bottom) };
        }),
      );
    // Search, its button, two selects; the Amount's currency, Minimum, Maximum and Apply; two dates.
    expect(controls).toHaveLength(10);
    expect(new Set(controls.map((control) => control.height)).size).toBe(1);
    // Two rows at 1280 px, each control on its row's one baseline: the search and the selects, then
    // the Amount and the dates (a control off its row's baseline would make a third bottom).
    const perRow = new Map<number, number>();
    for (const { bottom } of controls) perRow.set(bottom, (perRow.get(bottom) ?? 0) + 1);
    expect([...perRow].sort(([a], [b]) => a - b).map(([, count]) => count)).toEqual([4, 6]);
  });

  it('exports the filtered campaigns as CSV: the same rows, the table columns plus ids', async () => {
    // A link drawn as a button, read by its frame as the buttons beside it: not underlined.
    const exportLink = page.getByRole('link', { name: 'Export CSV' });
    await expect(
      exportLink.evaluate((link) => link.ownerDocument.defaultView!.getComputedStyle(link).textDecorationLine),
    ).resolves.toBe('none');
    const [download] = await Promise.all([page.waitForEvent('download'), exportLink.click()]);
    // Named after what it holds, and the day it was exported in the viewer's zone: it was
    // `campaigns.csv` whatever the filters.
    const today = await page.evaluate(() =>
      new Intl.DateTimeFormat('en-CA', { year: 'numeric', month: '2-digit', day: '2-digit' }).format(new Date()),
    );
    expect(download.suggestedFilename()).toBe(`campaigns-in-flight-soft-${today}.csv`);
    const text = await readFile(await download.path(), 'utf8');
    // The file opens with a UTF-8 byte order mark, for Excel (docs/dashboard-api.md, "Exports").
    expect(text.startsWith(UTF8_BOM)).toBe(true);
    const [header, ...lines] = text.slice(UTF8_BOM.length).trimEnd().split('\n');
    expect(header).toBe(CAMPAIGN_EXPORT_COLUMNS.join(','));
    expect(lines).toHaveLength(TIE_SIZE);
    const column = (name: string) => CAMPAIGN_EXPORT_COLUMNS.indexOf(name as (typeof CAMPAIGN_EXPORT_COLUMNS)[number]);
    const rows = lines.map((line) => line.split(','));
    expect(rows.map((cells) => cells[column('psp_invoice_id')]).sort()).toEqual(
      Array.from({ length: TIE_SIZE }, (_, index) => tieInvoice(index)),
    );
    expect(new Set(rows.map((cells) => cells[column('status')]))).toEqual(new Set(['in_flight']));
    expect(new Set(rows.map((cells) => cells[column('customer_email')]))).toEqual(
      new Set(['ann@initech-customers.test']),
    );
  });

  it('searches by customer email and by invoice id', async () => {
    await page.getByLabel('Status').selectOption('');
    await page.getByLabel('Decline category').selectOption('');
    // A whole invoice id, part of an email or name (docs/dashboard-api.md, "Text filters"), and the field says so,
    // whole: the longer placeholder of before was cut off at 1280 px (the rules are in the hint under the box).
    const box = page.getByRole('searchbox', { name: CAMPAIGN_SEARCH });
    await expect(box.getAttribute('placeholder')).resolves.toBe('Invoice id, email or name');
    const room = await box.evaluate((input: any) => {
      const { document, getComputedStyle } = globalThis as any; // the page's (the tests' types have no DOM)
      const style = getComputedStyle(input);
      const context = document.createElement('canvas').getContext('2d');
      context.font = style.font;
      const inner = input.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
      return inner - context.measureText(input.placeholder).width;
    });
    expect(room).toBeGreaterThanOrEqual(0);
    await page.getByRole('searchbox', { name: CAMPAIGN_SEARCH }).fill('bob@initech-customers.test');
    await page.getByRole('button', { name: 'Search campaigns' }).click();
    await settlesTo(
      async () => (await tableRows(page, 'Recovery campaigns')).map((cells) => cells[0]).sort(),
      ['in_bob_0', 'in_bob_1', 'in_bob_2', 'in_bob_3', 'in_bob_4', 'in_markme'],
    );
    // The decline reason in words under its category; the processor's code on hover.
    const bobRow = page.getByRole('row').filter({ hasText: 'in_bob_0' });
    await expect(bobRow.getByRole('cell').nth(4).textContent()).resolves.toBe('Card update requiredExpired card');
    await expect(bobRow.getByTitle('expired_card').count()).resolves.toBe(1);
    await page.getByRole('searchbox', { name: CAMPAIGN_SEARCH }).fill('in_markme');
    await page.keyboard.press('Enter');
    await settlesTo(async () => (await tableRows(page, 'Recovery campaigns')).map((cells) => cells[0]), ['in_markme']);
    // A box emptied, then another filter changed: the change applies the empty box, which drops
    // the search from the address and the list (they kept q=in_markme, the box showing nothing).
    const invoices = async () => (await tableRows(page, 'Recovery campaigns')).map((cells) => cells[0]);
    const addressFilters = () => Promise.resolve(Object.fromEntries(new URL(page.url()).searchParams));
    await page.getByRole('searchbox', { name: CAMPAIGN_SEARCH }).fill('');
    await page.getByLabel('Status').selectOption('in_flight');
    await settlesTo(addressFilters, { status: 'in_flight' });
    await settlesTo(async () => (await invoices()).length > 1 && (await invoices()).includes('in_markme'), true);
    // And a box filled but not submitted is applied by the next filter change, as it reads.
    await page.getByRole('searchbox', { name: CAMPAIGN_SEARCH }).fill('in_markme');
    await page.getByLabel('Status').selectOption('');
    await settlesTo(addressFilters, { q: 'in_markme' });
    await settlesTo(invoices, ['in_markme']);
  });

  it("filters by the day of the first failure in the viewer's zone, the day the list shows", async () => {
    const newYorker = await signIn('owner@initech.test', { timezoneId: 'America/New_York', path: '/campaigns' });
    await newYorker.getByRole('heading', { level: 1, name: 'Campaigns' }).waitFor();
    await newYorker.getByRole('searchbox', { name: CAMPAIGN_SEARCH }).fill('cy@initech-customers.test');
    await newYorker.getByRole('button', { name: 'Search' }).click();
    const invoices = async () => (await tableRows(newYorker, 'Recovery campaigns')).map((cells) => cells[0]).sort();
    await settlesTo(invoices, ['in_cy_eve', 'in_cy_last_evening']);
    // The evening before the range is out, the last evening in it is in: by New York's days,
    // though in UTC the first is inside the range and the second after it.
    await newYorker.getByLabel('First failed from').fill(FILTER_FROM);
    await newYorker.getByLabel('First failed before').fill(FILTER_BEFORE);
    await settlesTo(invoices, ['in_cy_last_evening']);
    // The address keeps the days as picked.
    const params = new URL(newYorker.url()).searchParams;
    expect([params.get('from'), params.get('to')]).toEqual([FILTER_FROM, FILTER_BEFORE]);
  });

  it('says why a range of days that holds no day cannot match, beside its fields, and asks the server nothing', async () => {
    const ranged = await signIn('owner@initech.test', { path: '/campaigns' });
    const rangedQueries: string[] = [];
    ranged.on('request', (request) => {
      const url = new URL(request.url());
      if (url.pathname.includes('/api/campaigns') && url.searchParams.has('from') && url.searchParams.has('to')) {
        rangedQueries.push(url.search);
      }
    });
    await ranged.getByRole('table', { name: 'Recovery campaigns' }).waitFor();
    const from = ranged.getByLabel('First failed from');
    const before = ranged.getByLabel('First failed before');
    /** The texts the field's aria-describedby points to. */
    const description = (field: Locator) =>
      field.evaluate((element) =>
        (element.getAttribute('aria-describedby') ?? '')
          .split(' ')
          .filter(Boolean)
          .map((id: string) => element.ownerDocument.getElementById(id)?.textContent)
          .join(' '),
      );

    await from.fill('2025-03-10');
    await before.fill('2025-03-01');
    const hint = ranged.getByRole('alert');
    await hint.filter({ hasText: 'The start day is after the end day, so nothing can match.' }).waitFor();
    for (const field of [from, before]) {
      await expect(description(field)).resolves.toContain('The start day is after the end day, so nothing can match.');
      await expect(field.getAttribute('aria-invalid')).resolves.toBe('true');
    }
    // No list, and no "No campaigns match" under the hint: the hint is the answer.
    await expect(ranged.getByRole('table', { name: 'Recovery campaigns' }).count()).resolves.toBe(0);
    await expect(ranged.getByText('No campaigns match these filters.').count()).resolves.toBe(0);
    await expect(ranged.getByRole('button', { name: 'Export CSV' }).isDisabled()).resolves.toBe(true);

    // "Before" is exclusive: the same day twice holds no day either, and the hint says what to pick.
    await before.fill('2025-03-10');
    await hint.filter({ hasText: 'The end day is not included' }).waitFor();
    expect(rangedQueries).toEqual([]);

    await before.fill('2025-03-11');
    await ranged.getByText('No campaigns match these filters.').waitFor();
    await expect(hint.count()).resolves.toBe(0);
    await expect(from.getAttribute('aria-invalid')).resolves.toBeNull();
    expect(rangedQueries).toHaveLength(1);
  });

  it('Mark lost asks to confirm, closes the campaign, shows it in the timeline and delivers recovery.lost with source "dashboard"', async () => {
    await page.getByRole('link', { name: 'in_markme' }).click();
    await page.getByRole('heading', { level: 1, name: 'Invoice in_markme' }).waitFor();
    await page.getByRole('button', { name: 'Mark lost' }).click();
    const dialog = page.getByRole('dialog', { name: 'Mark lost' });
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await dialog.waitFor({ state: 'detached' });
    await page.getByRole('button', { name: 'Mark lost' }).click();
    // The confirmation says what endpoints are told in words, not as the event's code.
    const promise = await dialog.textContent();
    expect(promise).toContain('your webhook endpoints are told "Payment lost"');
    expect(promise).not.toContain('recovery.lost');
    await dialog.getByRole('button', { name: 'Mark lost' }).click();
    await dialog.waitFor({ state: 'detached' });
    const facts = page.getByRole('region', { name: 'Campaign' });
    await facts.getByText('Lost', { exact: true }).waitFor();
    // The decline in words, its category and the processor's code under it for an engineer.
    await expect(facts.getByRole('definition').allTextContents()).resolves.toContain(
      'Customer must authenticateAuthentication required · authentication_required',
    );
    // Who closed it by name, the email the action recorded under it (it said the email alone). The
    // names come with the team's list, read after the campaign: waited for, not read at once (on a
    // loaded machine the email alone was read, before the list came).
    await facts.getByRole('definition').filter({ hasText: 'Bill Lumbergh' }).waitFor();
    await expect(facts.getByRole('definition').allTextContents()).resolves.toContain('Bill Lumberghowner@initech.test');
    // A closed campaign offers no action.
    await expect(page.getByRole('button', { name: /Mark (recovered|lost)/ }).count()).resolves.toBe(0);

    // No worker yet: the event is recorded, its deliveries not made. The page says it is on its
    // way, not that no endpoint wanted it (what it said, read before the dispatcher had run).
    const timeline = page.getByRole('region', { name: 'Timeline' });
    const lostEvent = timeline.getByRole('listitem').filter({ hasText: 'recovery.lost' });
    // The event in words; its code beside it, quieter.
    await expect(lostEvent.locator('strong').first().textContent()).resolves.toBe('Payment lost');
    await expect(lostEvent.locator('code').first().textContent()).resolves.toBe('recovery.lost');
    await lostEvent.getByText('Being sent to the endpoints subscribed to it', { exact: false }).waitFor();
    await expect(timeline.getByText(/No delivery on record/).count()).resolves.toBe(0);
    // Once the worker has made the delivery, the page shows it without being reloaded.
    await world.current.startWorker();
    await lostEvent.getByText(/Initech CRM: Succeeded/).waitFor({ timeout: 20_000 });
    await expect(timeline.getByText(/Being sent/).count()).resolves.toBe(0);

    const [delivered] = await world.current.receiver.waitForRequests(HOOK_PATH, 1);
    const event = verifyWebhook(delivered!.rawBody, delivered!.headers['x-service-signature'], initech.hookSecret);
    expect(event.type).toBe('recovery.lost');
    expect(event.data).toMatchObject({ campaign_id: initech.markMeId, source: 'dashboard', amount_cents: 4_200 });

    // The event and its delivery (once the worker has made it), and who closed it, by hand.
    await settlesTo(async () => {
      await page.reload();
      await timeline.getByText(/Marked lost by Bill Lumbergh \(owner@initech\.test\)/).waitFor();
      return timeline
        .getByRole('listitem')
        .filter({ hasText: 'recovery.lost' })
        .getByText(/Initech CRM: Succeeded/)
        .count();
    }, 1);

    // Marked lost and the event it recorded have one time: the cause (who marked it lost) comes
    // before its effect (the event), in sentence case as the event's words are.
    const entries = await timeline.getByRole('list').first().locator(':scope > li').allTextContents();
    const marked = entries.findIndex((entry) => /Marked lost by Bill Lumbergh/.test(entry));
    const lost = entries.findIndex((entry) => /Payment lost recovery\.lost/.test(entry));
    expect([marked, lost]).toEqual([entries.length - 2, entries.length - 1]);

    // The server refuses a second close with the conflict message.
    const again = await fetch(`${world.current.url}/dashboard/api/campaigns/${initech.markMeId}/mark-recovered`, {
      method: 'POST',
      headers: { origin: world.current.url, cookie: await cookieHeader(page) },
    });
    expect(again.status).toBe(409);
    await expect(again.json()).resolves.toEqual({
      error: {
        type: 'conflict',
        code: 'campaign_closed',
        message: `Campaign ${initech.markMeId} is already lost; a closed campaign cannot change`,
      },
    });
  });

  it('while the processor is not connected: Mark lost promises no webhook, the timeline says why it was not sent (never "being sent"), and the webhooks page says they are paused', async () => {
    const workspace = () => world.current.db('workspaces').where({ id: initech.id });
    const { id } = await world.current
      .db('recovery_campaigns')
      .where({ workspace_id: initech.id, psp_invoice_id: 'in_cy_last_evening' })
      .first<{ id: string }>('id');
    // The world's worker (started above) is running: the event is dispatched, and dropped.
    await workspace().update({ processor_status: 'disconnected' });
    try {
      await page.goto(`${world.current.url}/dashboard/campaigns/${id}`);
      await page.getByRole('heading', { level: 1, name: 'Invoice in_cy_last_evening' }).waitFor();
      await page.getByRole('button', { name: 'Mark lost' }).click();
      const dialog = page.getByRole('dialog', { name: 'Mark lost' });
      const promise = await dialog.textContent();
      expect(promise).not.toContain('your webhook endpoints are told');
      expect(promise).toContain(
        'Outbound webhooks are paused (the payment processor is not connected and syncing), so your webhook endpoints are not told, then or later.',
      );
      await dialog.getByRole('button', { name: 'Mark lost' }).click();
      await dialog.waitFor({ state: 'detached' });

      const timeline = page.getByRole('region', { name: 'Timeline' });
      const lostEvent = timeline.getByRole('listitem').filter({ hasText: 'recovery.lost' });
      const notSent =
        'Not sent: the payment processor was not connected and syncing when this happened, so outbound webhooks ' +
        'were paused. It will not be sent later.';
      await lostEvent.getByText(notSent).waitFor();
      await expect(timeline.getByText(/Being sent/).count()).resolves.toBe(0);
      // Once the dispatcher has taken it (with no delivery), the page says the same, not "no endpoint subscribed".
      const [event] = await world.current.db('events').whereRaw("data ->> 'campaign_id' = ?", [id]).select('seq');
      // The worker's dispatch, on a loaded machine: 10 s ran out once in CI.
      await settlesTo(async () => (await world.current.db('event_outbox').where({ seq: event.seq })).length, 0, 30_000);
      await page.reload();
      await lostEvent.getByText(notSent).waitFor();
      await expect(timeline.getByText(/Being sent|No delivery on record/).count()).resolves.toBe(0);
      expect(world.current.receiver.requestsTo(HOOK_PATH)).toHaveLength(1);

      // The webhooks page, which every role may open (the Processor page is the owners'), says so.
      await page.goto(`${world.current.url}/dashboard/settings/webhooks`);
      await page.getByRole('heading', { level: 1, name: 'Outbound webhooks' }).waitFor();
      await page
        .getByText(
          'Outbound webhooks are paused: the payment processor is not connected and syncing. Events recorded meanwhile are not sent, then or later.',
          { exact: false },
        )
        .waitFor();
    } finally {
      await workspace().update({ processor_status: 'connected' });
    }
    await page.reload();
    await page.getByRole('heading', { level: 1, name: 'Outbound webhooks' }).waitFor();
    await expect(page.getByText('Outbound webhooks are paused', { exact: false }).count()).resolves.toBe(0);
  }, 60_000);

  it('opens a customer with their subscriptions, campaigns and cancel sessions, and a cancel session with its feedback', async () => {
    await page.goto(`${world.current.url}/dashboard/customers`);
    await page.getByRole('searchbox', { name: 'Search by email or name' }).fill('ann@initech-customers.test');
    await page.keyboard.press('Enter');
    await page.getByRole('link', { name: 'ann@initech-customers.test' }).click();
    await page.getByRole('heading', { level: 1, name: 'ann@initech-customers.test' }).waitFor();
    // Every status, outcome and reason in words (labels.ts), never its code humanized.
    await expect(tableRows(page, 'Subscriptions')).resolves.toEqual([
      [expect.any(String), expect.any(String), 'Active', expect.any(String), expect.any(String), expect.any(String)],
    ]);
    await expect(tableRows(page, 'Recovery campaigns')).resolves.toHaveLength(50);
    await expect(tableRows(page, 'Cancel sessions')).resolves.toEqual([
      [expect.any(String), 'Canceled', 'Missing features', expect.any(String), expect.any(String)],
    ]);
    await page.getByRole('table', { name: 'Cancel sessions' }).getByRole('link').click();
    // Named by its customer, the heading and the tab alike, not "Cancel session" on every one.
    await page
      .getByRole('heading', { level: 1, name: 'Cancel session of ann@initech-customers.test', exact: true })
      .waitFor();
    await expect(page.title()).resolves.toMatch(/^Cancel session of ann@initech-customers\.test · /);
    // The regions' facts load after the heading: waited for, then read whole.
    const session = page.getByRole('region', { name: 'Session' }).getByRole('definition');
    await session.filter({ hasText: 'Missing features' }).waitFor();
    await expect(session.allTextContents()).resolves.toEqual(expect.arrayContaining(['Canceled', 'Missing features']));
    const customer = page.getByRole('region', { name: 'Customer' }).getByRole('definition');
    await customer.filter({ hasText: 'Active' }).first().waitFor();
    await expect(customer.allTextContents()).resolves.toEqual(expect.arrayContaining(['Active']));
    // Feedback is the customer's text, never markup.
    await page.getByText('Needs <b>SSO</b>', { exact: false }).waitFor();
    await expect(page.locator('b').count()).resolves.toBe(0);
  });

  it("writes every time one way, in the viewer's zone and naming it: in the text on detail pages, on hover in lists", async () => {
    const newYorker = await signIn('owner@initech.test', {
      timezoneId: 'America/New_York',
      path: `/cancel-sessions/${initech.sessionId}`,
    });
    const wholeTime = /^[A-Z][a-z]{2} \d{1,2}, \d{4}, \d{1,2}:\d{2} [AP]M E[SD]T$/;
    const utc = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} UTC$/;
    /** A fact's text: the whole time, then its UTC time for screen readers (`<Time sayUtc>`). */
    const factText = new RegExp(`^${wholeTime.source.slice(1, -1)} \\(${utc.source.slice(1, -1)}\\)$`);
    /** A fact's <time>: its text and its title. */
    const factTime = async (region: string, label: string) => {
      const time = newYorker
        .getByRole('region', { name: region })
        .getByRole('term')
        .filter({ hasText: new RegExp(`^${label}$`) })
        .locator('xpath=following-sibling::dd[1]//time');
      return { text: await time.textContent(), title: await time.getAttribute('title') };
    };
    const started = await factTime('Session', 'Started');
    expect(started.text).toMatch(factText);
    expect(started.title).toMatch(utc);
    await newYorker.goto(`${world.current.url}/dashboard/campaigns/${initech.openId}`);
    await expect(factTime('Campaign', 'First failed')).resolves.toEqual({
      text: expect.stringMatching(factText),
      title: expect.stringMatching(utc),
    });
    // A list cell keeps to the day; its title is the whole time, zone named, then UTC.
    await newYorker.goto(`${world.current.url}/dashboard/campaigns`);
    const cellTime = newYorker.getByRole('table', { name: 'Recovery campaigns' }).locator('time').first();
    await expect(cellTime.getAttribute('title')).resolves.toMatch(
      / E[SD]T \(\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} UTC\)$/,
    );
  });

  it("finds campaigns by part of a customer's name or email, says so in the box's description, and asks for 3 characters", async () => {
    const searcher = await signIn('owner@initech.test', { path: '/campaigns' });
    const box = searcher.getByRole('searchbox', { name: CAMPAIGN_SEARCH });
    const description = await box.evaluate(
      (input) => input.ownerDocument.getElementById(input.getAttribute('aria-describedby') ?? '')?.textContent,
    );
    expect(description).toBe(
      "An invoice id or its first characters (in_ and at least 4 more), or at least 3 characters of a customer's email or name.",
    );
    const invoices = async () => (await tableRows(searcher, 'Recovery campaigns')).map((cells) => cells[0]).sort();
    await box.fill('PAULS');
    await box.press('Enter');
    await settlesTo(invoices, ['in_bob_0', 'in_bob_1', 'in_bob_2', 'in_bob_3', 'in_bob_4', 'in_markme']);
    // Under 3 characters: said at the box and not applied: nothing asked for, the list and its
    // export stay the ones the address asks for (they were emptied for a slip of the keyboard).
    const asked: string[] = [];
    const onRequest = (request: { url(): string }) => {
      if (request.url().includes('/dashboard/api/campaigns')) asked.push(request.url());
    };
    searcher.on('request', onRequest);
    // The filter row as laid out: the search's width, and where the last field of the row sits.
    const filterRow = async () => {
      const search = await box.locator('xpath=ancestor::form').boundingBox();
      const before = await searcher.getByLabel('First failed before').boundingBox();
      return { searchWidth: Math.round(search!.width), lastFieldLeft: Math.round(before!.x) };
    };
    const rowBefore = await filterRow();
    try {
      await box.fill(' bo ');
      await box.press('Enter');
      await searcher.getByRole('alert').filter({ hasText: 'Type at least 3 characters to search.' }).waitFor();
      // Said under the box within the search's width: the row keeps its layout (the sentence
      // widened the search from 315 to 527 px at 1280 and pushed the last field to a row of its
      // own). A line under a field may push the rows below it down, never sideways.
      const rowAfter = await filterRow();
      expect(rowAfter.lastFieldLeft).toBe(rowBefore.lastFieldLeft);
      expect(rowAfter.searchWidth).toBeLessThan(rowBefore.searchWidth + 16);
      await expect(box.getAttribute('aria-invalid')).resolves.toBe('true');
      expect(new URL(searcher.url()).searchParams.get('q')).toBe('PAULS');
      await settlesTo(invoices, ['in_bob_0', 'in_bob_1', 'in_bob_2', 'in_bob_3', 'in_bob_4', 'in_markme']);
      await expect(searcher.getByRole('link', { name: 'Export CSV' }).count()).resolves.toBe(1);
      // An edit takes the refusal back, until the next search.
      await box.press('End');
      await box.press('Backspace');
      await expect(searcher.getByRole('alert').filter({ hasText: 'Type at least 3 characters' }).count()).resolves.toBe(
        0,
      );
      await expect(box.getAttribute('aria-invalid')).resolves.toBeNull();
      // In a hand-edited address, which is applied as it stands, it asks nothing: no list, no
      // export. Spaces alone the same: the server refuses them as too short.
      await searcher.goto(`${world.current.url}/dashboard/campaigns?q=bo`);
      await searcher.getByRole('alert').filter({ hasText: 'Type at least 3 characters to search.' }).waitFor();
      await expect(searcher.getByRole('table', { name: 'Recovery campaigns' }).count()).resolves.toBe(0);
      await expect(searcher.getByRole('link', { name: 'Export CSV' }).count()).resolves.toBe(0);
      await searcher.goto(`${world.current.url}/dashboard/campaigns?q=%20%20%20`);
      await searcher.getByRole('alert').filter({ hasText: 'Type at least 3 characters to search.' }).waitFor();
      await expect(searcher.getByRole('table', { name: 'Recovery campaigns' }).count()).resolves.toBe(0);
      expect(asked).toEqual([]);
    } finally {
      searcher.off('request', onRequest);
    }
    // A tag is still matched whole, and the empty list says so.
    await searcher.goto(`${world.current.url}/dashboard/customers?tag=vi`);
    await searcher
      .getByText('No customers match. Search matches a whole tag exactly; "vi" is not looked for within them.')
      .waitFor();
  });

  it('finds a customer by part of their name, in any case, and by part of their email', async () => {
    const searcher = await signIn('member@initech.test', { path: '/customers' });
    const box = searcher.getByRole('searchbox', { name: 'Search by email or name' });
    await expect(box.getAttribute('placeholder')).resolves.toBe('Part of an email or name');
    const emails = async () => (await tableRows(searcher, 'Customers')).map((cells) => cells[0]).sort();
    await settlesTo(async () => (await emails()).length > 1, true);
    await box.fill('rt PAUL');
    await searcher.getByRole('button', { name: 'Search customers' }).click();
    await settlesTo(emails, ['bob@initech-customers.test']);
    await searcher.getByRole('row').filter({ hasText: 'Robert Paulson' }).waitFor();
    expect(new URL(searcher.url()).searchParams.get('q')).toBe('rt PAUL');
    await box.fill('cy@initech');
    await box.press('Enter');
    await settlesTo(emails, ['cy@initech-customers.test']);
  });

  it('keeps a search or a tag longer than the server takes whole, says so at its box, and asks nothing', async () => {
    const searcher = await signIn('member@initech.test', { path: '/customers' });
    const box = searcher.getByRole('searchbox', { name: 'Search by email or name' });
    await tableRows(searcher, 'Customers');
    const asked: string[] = [];
    searcher.on('request', (request) => {
      if (request.url().includes('/dashboard/api/customers')) asked.push(request.url());
    });
    // 321 characters: the box had maxLength 320, which cut a paste and searched for the rest.
    await box.fill('x'.repeat(321));
    await box.press('Enter');
    const problem = searcher.getByRole('alert').filter({ hasText: 'At most 320 characters: this has 321.' });
    await problem.waitFor();
    await expect(box.inputValue()).resolves.toHaveLength(321);
    await expect(box.getAttribute('aria-invalid')).resolves.toBe('true');
    // Not applied: the list stays the one the address asks for.
    await expect(searcher.getByRole('table', { name: 'Customers' }).count()).resolves.toBe(1);
    // The tag box: the server looks up a tag of at most 100 characters.
    await box.fill('');
    const tag = searcher.getByRole('searchbox', { name: 'Tag' });
    await tag.fill('t'.repeat(101));
    await tag.press('Enter');
    await searcher.getByRole('alert').filter({ hasText: 'At most 100 characters: this has 101.' }).waitFor();
    await searcher.waitForTimeout(300);
    expect(asked).toEqual([]);
  });

  it('keeps a long invoice id whole on its own line at 390 px, never its last letter alone', async () => {
    const longId = 'in_Va7R1v6RujzSeQuHEg2ncJWM'; // a Stripe invoice id, as in the demo
    const campaigns = world.current.db('recovery_campaigns').where({ workspace_id: initech.id });
    const { id } = await campaigns.clone().where({ psp_invoice_id: 'in_done_0' }).first<{ id: string }>('id');
    await world.current.db('recovery_campaigns').where({ id }).update({ psp_invoice_id: longId });
    try {
      const phone = await signIn('owner@initech.test', {
        path: `/campaigns/${id}`,
        viewport: { width: 390, height: 844 },
      });
      const heading = phone.getByRole('heading', { level: 1, name: `Invoice ${longId}` });
      await heading.waitFor();
      // The lines the id's characters are set on (distinct tops of their boxes).
      const lines = await heading.evaluate((h1, text) => {
        const walker = h1.ownerDocument.createTreeWalker(h1, 4); // NodeFilter.SHOW_TEXT (no DOM types here)
        for (let node = walker.nextNode(); node; node = walker.nextNode()) {
          const start = node.textContent!.indexOf(text);
          if (start < 0) continue;
          const range = h1.ownerDocument.createRange();
          range.setStart(node, start);
          range.setEnd(node, start + text.length);
          return new Set([...range.getClientRects()].map((rect) => Math.round(rect.top))).size;
        }
        return -1;
      }, longId);
      expect(lines).toBe(1);
    } finally {
      await world.current.db('recovery_campaigns').where({ id }).update({ psp_invoice_id: 'in_done_0' });
    }
  });

  it("leaves the Customer column out of a customer's own campaigns and cancel sessions, which the lists keep", async () => {
    const headers = async (name: string) => {
      const table = page.getByRole('table', { name });
      await table.waitFor();
      return table.getByRole('columnheader').allTextContents();
    };
    await page.goto(`${world.current.url}/dashboard/campaigns`);
    await expect(headers('Recovery campaigns')).resolves.toContain('Customer');
    await page.goto(`${world.current.url}/dashboard/cancel-sessions`);
    await expect(headers('Cancel sessions')).resolves.toContain('Customer');

    await page.goto(`${world.current.url}/dashboard/customers/${initech.customerId}`);
    await page.getByRole('heading', { level: 1, name: 'ann@initech-customers.test' }).waitFor();
    for (const [table, firstColumn] of [
      ['Recovery campaigns', 'Invoice'],
      ['Cancel sessions', 'Started'],
    ] as const) {
      const shown = await headers(table);
      expect(shown[0]).toBe(firstColumn);
      expect(shown).not.toContain('Customer');
    }
  });

  it('every insight page passes axe and fits 390 px', async () => {
    const pages: Array<[string, string]> = [
      ['/', 'overview'],
      ['/campaigns?status=in_flight', 'campaigns'],
      [`/campaigns/${initech.markMeId}`, 'campaign'],
      ['/customers', 'customers'],
      [`/customers/${initech.customerId}`, 'customer'],
      ['/cancel-sessions', 'cancel-sessions'],
      [`/cancel-sessions/${initech.sessionId}`, 'cancel-session'],
    ];
    const problems: string[] = [];
    for (const [route, name] of pages) {
      await page.goto(`${world.current.url}/dashboard${route}`);
      await page.getByRole('heading', { level: 1 }).waitFor();
      await loaded(page);
      problems.push(...(await checkPage(page, name)));
    }
    expect(problems).toEqual([]);
  }, 120_000);
});

describe('customers', () => {
  it('exports the filtered customers as CSV: the rows of the list, in its order, tags in one cell', async () => {
    const page = await signIn('member@initech.test');
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Customers' }).click();
    await page.getByRole('heading', { level: 1, name: 'Customers' }).waitFor();
    await page.getByRole('searchbox', { name: 'Tag' }).fill('VIP');
    await page.keyboard.press('Enter');
    const emails = async () => (await tableRows(page, 'Customers')).map((cells) => cells[0]);
    await settlesTo(async () => (await emails()).sort(), ['ann@initech-customers.test', 'bob@initech-customers.test']);
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('link', { name: 'Export CSV' }).click(),
    ]);
    // Named after its filters, and the day it was exported in the viewer's zone, as the campaigns
    // export is: it was `customers.csv` whatever the filters.
    const today = await page.evaluate(() =>
      new Intl.DateTimeFormat('en-CA', { year: 'numeric', month: '2-digit', day: '2-digit' }).format(new Date()),
    );
    expect(download.suggestedFilename()).toBe(`customers-tag-vip-${today}.csv`);
    const text = await readFile(await download.path(), 'utf8');
    // The file opens with a UTF-8 byte order mark, for Excel (docs/dashboard-api.md, "Exports").
    expect(text.startsWith(UTF8_BOM)).toBe(true);
    const [header, ...lines] = text.slice(UTF8_BOM.length).trimEnd().split('\n');
    expect(header).toBe(CUSTOMER_EXPORT_COLUMNS.join(','));
    const column = (name: (typeof CUSTOMER_EXPORT_COLUMNS)[number]) => CUSTOMER_EXPORT_COLUMNS.indexOf(name);
    const rows = lines.map((line) => line.split(','));
    expect(rows.map((cells) => cells[column('email')])).toEqual(await emails());
    expect(rows.map((cells) => [cells[column('email')], cells[column('tags')]]).sort()).toEqual([
      ['ann@initech-customers.test', 'vip; annual'],
      ['bob@initech-customers.test', 'vip'],
    ]);
  });
});

describe('a record not in the workspace', () => {
  let page: Page;

  beforeAll(async () => {
    page = await signIn('owner@initech.test');
  });

  it("says plainly that a record is not in the workspace (another workspace's, or no id at all), with the way back", async () => {
    const pages: Array<[path: string, text: string, back: string, heading: string, title: string]> = [
      [
        `/customers/${globex.customerId}`,
        'There is no such customer in this workspace.',
        'All customers',
        'Customers',
        'Customer',
      ],
      [
        '/campaigns/00000000-0000-0000-0000-000000000000',
        'There is no such campaign in this workspace.',
        'All campaigns',
        'Campaigns',
        'Campaign',
      ],
      [
        '/cancel-sessions/not-an-id',
        'There is no such cancel session in this workspace.',
        'All cancel sessions',
        'Cancel sessions',
        'Cancel session',
      ],
    ];
    for (const [path, text, back, heading, title] of pages) {
      await page.goto(`${world.current.url}/dashboard${path}`);
      await page.getByText(text).waitFor();
      // The tab's title names the page, as its h1 does.
      await page.getByRole('heading', { level: 1, name: title, exact: true }).waitFor();
      await page.waitForFunction(`document.title.startsWith(${JSON.stringify(`${title} · `)})`);
      await expect(page.getByRole('alert').count()).resolves.toBe(0);
      await expect(page.getByRole('button', { name: 'Try again' }).count()).resolves.toBe(0);
      await page.getByRole('link', { name: back }).click();
      await page.getByRole('heading', { level: 1, name: heading }).waitFor();
    }
  });

  it("says the same of a webhook endpoint: another workspace's, an unknown UUID, an id that is not one", async () => {
    const globexPage = await signIn(globex.ownerEmail);
    for (const id of [initech.hookId, '00000000-0000-0000-0000-000000000000', 'not-an-id']) {
      await globexPage.goto(`${world.current.url}/dashboard/settings/webhooks/${id}`);
      await globexPage.getByText('There is no such webhook endpoint in this workspace.').waitFor();
      // Named, as the other records' pages are: the h1, and with it the tab's title (it was the
      // workspace's name alone, "Globex · Retention dashboard").
      await globexPage.getByRole('heading', { level: 1, name: 'Webhook endpoint', exact: true }).waitFor();
      await globexPage.waitForFunction(`document.title.startsWith('Webhook endpoint · ')`, undefined, {
        timeout: 2_000,
      });
      await expect(globexPage.getByRole('alert').count()).resolves.toBe(0);
      await expect(globexPage.getByRole('button', { name: 'Try again' }).count()).resolves.toBe(0);
      // On a phone the way back is one unbroken line, not squeezed beside the sentence.
      await globexPage.setViewportSize({ width: 390, height: 844 });
      const backLines = await globexPage.getByRole('link', { name: 'All endpoints' }).evaluate((link) => {
        const range = link.ownerDocument.createRange();
        range.selectNodeContents(link);
        return range.getClientRects().length;
      });
      expect(backLines).toBe(1);
      await globexPage.setViewportSize({ width: 1280, height: 900 });
      await globexPage.getByRole('link', { name: 'All endpoints' }).click();
      await globexPage.getByRole('heading', { level: 1, name: 'Outbound webhooks' }).waitFor();
    }
  });
});

describe('an address the dashboard has no page at', () => {
  it('says "Page not found", in its h1 and the tab\'s title, for an unknown Settings section as for any unknown address', async () => {
    const page = await signIn('owner@initech.test');
    for (const path of ['/nope', '/settings/nope', '/settings/webhooks/one/two']) {
      await page.goto(`${world.current.url}/dashboard${path}`);
      await page.getByRole('heading', { level: 1, name: 'Page not found' }).waitFor();
      await page.getByText('There is no page at this address.').waitFor();
      await page.waitForFunction(`document.title.startsWith('Page not found · ')`, undefined, { timeout: 2_000 });
      // The address stays what was asked for: no section shown under it, no redirect.
      expect(new URL(page.url()).pathname).toBe(`/dashboard${path}`);
      await expect(page.getByRole('heading', { level: 1, name: 'API tokens' }).count()).resolves.toBe(0);
    }
    // Under Settings its tabs stay, to go on from there.
    await page.getByRole('navigation', { name: 'Settings' }).getByRole('link', { name: 'Team' }).click();
    await page.getByRole('heading', { level: 1, name: 'Team' }).waitFor();
    // Settings itself still opens on the first tab, in place of its address.
    await page.goto(`${world.current.url}/dashboard/settings`);
    await page.getByRole('heading', { level: 1, name: 'API tokens' }).waitFor();
    expect(new URL(page.url()).pathname).toBe('/dashboard/settings/tokens');
  });
});

describe('a member', () => {
  it('reads a campaign but is offered no action, and the API refuses one', async () => {
    const page = await signIn('member@initech.test', { path: `/campaigns/${initech.openId}` });
    await page.getByRole('heading', { level: 1, name: 'Invoice in_open' }).waitFor();
    await page.getByRole('region', { name: 'Timeline' }).waitFor();
    await expect(page.getByRole('button', { name: /Mark (recovered|lost)/ }).count()).resolves.toBe(0);
    const refused = await fetch(`${world.current.url}/dashboard/api/campaigns/${initech.openId}/mark-lost`, {
      method: 'POST',
      headers: { origin: world.current.url, cookie: await cookieHeader(page) },
    });
    expect(refused.status).toBe(403);
    const campaign = (await (
      await fetch(`${world.current.url}/dashboard/api/campaigns/${initech.openId}`, {
        headers: { cookie: await cookieHeader(page) },
      })
    ).json()) as { status: string };
    expect(campaign.status).toBe('in_flight');
  });
});
