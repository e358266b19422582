import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { BrowserContext, Page } from 'playwright-core';
import { hashPassword, loadFixtures } from '@retention/domain';
import { eventually, testSecretsKeyBytes } from '@retention/testkit';
import { desktopPage, PASSWORD, signInThroughForm, useDashboardWorld } from './support/dashboard-world.js';

/**
 * Back to a list (docs/dashboard-ui.md, "Back to a list"): after Load more, opening a row and
 * pressing the browser's Back, the list has the rows it had and is scrolled where it was, as in
 * a real headless Chromium against the real API. A workspace of its own with more rows than two
 * pages (50 a page) of campaigns, customers and cancel sessions.
 */
const world = useDashboardWorld();

const ROWS = 120;
const EMAIL = 'owner@umbrella.test';
const pad = (index: number) => String(index).padStart(3, '0');
let context: BrowserContext;
let page: Page;

beforeAll(async () => {
  const { db } = world.current;
  const minute = 60_000;
  const start = Date.now() - 10 * 86_400_000;
  await loadFixtures(db, testSecretsKeyBytes(), {
    workspaces: [
      {
        key: 'umbrella',
        name: 'Umbrella',
        users: [{ key: 'owner', email: EMAIL, role: 'owner' }],
        customers: Array.from({ length: ROWS }, (_, index) => ({
          key: `c${index}`,
          email: `customer${pad(index)}@umbrella-customers.test`,
          subscriptions: [{ key: `s${index}` }],
        })),
        campaigns: Array.from({ length: ROWS }, (_, index) => ({
          customer: `c${index}`,
          psp_invoice_id: `in_back_${pad(index)}`,
          status: 'in_flight' as const,
          first_failed_at: new Date(start + index * minute).toISOString(),
        })),
        cancel_sessions: Array.from({ length: ROWS }, (_, index) => ({
          customer: `c${index}`,
          outcome: 'canceled' as const,
          reason_code: 'too_expensive' as const,
          created_at: new Date(start + index * minute).toISOString(),
          ended_at: new Date(start + index * minute).toISOString(),
        })),
      },
    ],
  });
  await db('users')
    .where({ email: EMAIL })
    .update({ password_hash: await hashPassword(PASSWORD), name: 'Albert Wesker' });
  ({ context, page } = await desktopPage(world.current.browser));
  await signInThroughForm(page, world.current.url, EMAIL);
}, 60_000);

afterAll(async () => {
  await context?.close();
});

/** The body rows of the table named `name` (its header row left out). */
const bodyRows = (name: string) =>
  page
    .getByRole('table', { name })
    .getByRole('row')
    .filter({ has: page.getByRole('cell') });

/** Waits until `read` gives a value `holds` accepts (10 s at most), then gives the last value read. */
async function settled<T>(read: () => Promise<T>, holds: (value: T) => boolean): Promise<T> {
  let last: T | undefined;
  await eventually(async () => holds((last = await read()))).catch(() => undefined);
  return last as T;
}

/** Whether the element's box is inside the window (scrolled into view). */
const inViewport = (locator: ReturnType<Page['getByRole']>) =>
  locator.evaluate((element) => {
    const box = element.getBoundingClientRect();
    return box.top >= 0 && box.bottom <= (element.ownerDocument.defaultView?.innerHeight ?? 0);
  });

/** Overview first: a list reached from another page is a fresh visit (a new history entry). */
async function openFromOverview(): Promise<void> {
  await openList('Overview');
}

const LISTS = [
  { nav: 'Campaigns', table: 'Recovery campaigns', detailHeading: /^Invoice in_back_/ },
  { nav: 'Customers', table: 'Customers', detailHeading: /@umbrella-customers\.test/ },
  { nav: 'Cancel sessions', table: 'Cancel sessions', detailHeading: 'Cancel session' },
];

/** Clicks the main navigation's link to a list and waits for its heading. */
async function openList(nav: string): Promise<void> {
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: nav }).click();
  await page.getByRole('heading', { level: 1, name: nav }).waitFor();
}

/** Expects the table named `table` to come to hold `rows` body rows. */
async function expectRows(table: string, rows: number): Promise<void> {
  await expect(
    settled(
      () => bodyRows(table).count(),
      (count) => count === rows,
    ),
  ).resolves.toBe(rows);
}

/** Opens a list and loads its second page: 50 rows, then 100. */
async function openTwoPages(nav: string, table: string): Promise<void> {
  await openList(nav);
  await expectRows(table, 50);
  await page.getByRole('button', { name: 'Load more' }).click();
  await expectRows(table, 100);
}

describe('Back to a list', () => {
  for (const list of LISTS) {
    it(`${list.nav}: Back after Load more and opening row 81 shows the 100 rows loaded, scrolled where it was`, async () => {
      await openTwoPages(list.nav, list.table);

      const row = bodyRows(list.table).nth(80);
      const link = row.getByRole('link').first();
      const linkName = (await link.textContent())!;
      await link.scrollIntoViewIfNeeded();
      const broughtInAt = await page.evaluate<number>('window.scrollY');
      await page.mouse.wheel(0, 120); // a scroll of the viewer's own, not only the one to bring the row in
      // The wheel scrolls in a later frame: read where it ended, not where it began (on a loaded
      // machine the page was read 120 px short, and the page then rightly restored the 120).
      const scrollY = await settled(
        () => page.evaluate<number>('window.scrollY'),
        (y) => y >= broughtInAt + 120,
      );
      await expect(settled(() => inViewport(link), Boolean)).resolves.toBe(true);
      expect(scrollY).toBeGreaterThan(1000);

      await link.click();
      await page.getByRole('heading', { level: 1, name: list.detailHeading }).waitFor();
      await page.goBack();

      await page.getByRole('heading', { level: 1, name: list.nav }).waitFor();
      await expectRows(list.table, 100);
      const again = bodyRows(list.table).nth(80).getByRole('link').first();
      await expect(again.textContent()).resolves.toBe(linkName);
      const restoredY = await settled(
        () => page.evaluate<number>('window.scrollY'),
        (y) => Math.abs(y - scrollY) < 5,
      );
      expect(Math.abs(restoredY - scrollY)).toBeLessThan(5);
      await expect(inViewport(again)).resolves.toBe(true);
      // Load more goes on from where the restored rows end.
      await page.getByRole('button', { name: 'Load more' }).click();
      await expectRows(list.table, ROWS);
    });
  }

  it('Campaigns filtered by Status: Back after Load more and opening a row shows the 100 rows loaded for that filter', async () => {
    await openFromOverview();
    await openList('Campaigns');
    await expectRows('Recovery campaigns', 50);
    // The filter is a history entry of its own (docs/dashboard-ui.md, "Filters and Back"): the
    // rows loaded after it are kept under that entry, not the one the page opened in.
    await page.getByRole('combobox', { name: 'Status' }).selectOption({ label: 'In flight' });
    await eventually(() => new URL(page.url()).searchParams.get('status') === 'in_flight');
    await expectRows('Recovery campaigns', 50);
    await page.getByRole('button', { name: 'Load more' }).click();
    await expectRows('Recovery campaigns', 100);
    const link = bodyRows('Recovery campaigns').nth(80).getByRole('link').first();
    const linkName = (await link.textContent())!;
    await link.click();
    await page.getByRole('heading', { level: 1, name: /^Invoice in_back_/ }).waitFor();
    await page.goBack();

    await page.getByRole('heading', { level: 1, name: 'Campaigns' }).waitFor();
    expect(new URL(page.url()).searchParams.get('status')).toBe('in_flight');
    await expectRows('Recovery campaigns', 100);
    await expect(bodyRows('Recovery campaigns').nth(80).getByRole('link').first().textContent()).resolves.toBe(
      linkName,
    );
  });

  it('shows a row changed meanwhile as it is now: a campaign marked recovered on its page reads Recovered on Back', async () => {
    await openFromOverview();
    await openTwoPages('Campaigns', 'Recovery campaigns');
    const row = bodyRows('Recovery campaigns').nth(70);
    await expect(row.getByText('In flight', { exact: true }).count()).resolves.toBe(1);
    await row.getByRole('link').first().click();
    await page.getByRole('heading', { level: 1, name: /^Invoice in_back_/ }).waitFor();
    await page.getByRole('button', { name: 'Mark recovered' }).click();
    const confirm = page.getByRole('dialog', { name: 'Mark recovered' });
    await confirm.getByRole('button', { name: 'Mark recovered' }).click();
    await confirm.waitFor({ state: 'detached' });
    await page.goBack();

    await page.getByRole('heading', { level: 1, name: 'Campaigns' }).waitFor();
    const again = bodyRows('Recovery campaigns').nth(70);
    await again.getByText('Recovered', { exact: true }).waitFor();
    await expect(bodyRows('Recovery campaigns').count()).resolves.toBe(100);
  });

  it('asks again for a list that had no rows, as for one that had many: rows that came meanwhile would show', async () => {
    await openFromOverview();
    await openList('Customers');
    await page.getByRole('searchbox', { name: 'Search by email or name' }).fill('nobody@umbrella-customers.test');
    await page.getByRole('button', { name: 'Search customers' }).click();
    const empty = page.getByText(/^No customers match/);
    await empty.waitFor();
    await openFromOverview();

    const asked: string[] = [];
    const onRequest = (request: { url(): string }) => {
      if (request.url().includes('/dashboard/api/customers')) asked.push(request.url());
    };
    page.on('request', onRequest);
    try {
      await page.goBack();
      await page.getByRole('heading', { level: 1, name: 'Customers' }).waitFor();
      await empty.waitFor();
      await eventually(() => asked.length > 0);
      expect(asked.every((url) => url.includes('q=nobody%40umbrella-customers.test'))).toBe(true);
    } finally {
      page.off('request', onRequest);
    }
  });

  // Filtered as each list offers: the control, the query it puts in the address, the row link.
  const FILTERED = [
    {
      nav: 'Campaigns',
      table: 'Recovery campaigns',
      detailHeading: /^Invoice in_back_/,
      filter: () => page.getByLabel('Status').selectOption('in_flight'),
      query: { status: 'in_flight' },
    },
    {
      nav: 'Customers',
      table: 'Customers',
      detailHeading: /@umbrella-customers\.test/,
      filter: async () => {
        await page.getByRole('searchbox', { name: 'Search by email or name' }).fill('customer01');
        await page.getByRole('button', { name: 'Search customers' }).click();
      },
      query: { q: 'customer01' },
    },
    {
      nav: 'Cancel sessions',
      table: 'Cancel sessions',
      detailHeading: 'Cancel session',
      filter: () => page.getByLabel('Outcome').selectOption('canceled'),
      query: { outcome: 'canceled' },
    },
  ];

  for (const list of FILTERED) {
    it(`${list.nav}: the breadcrumb on a row's page goes back to the list with its filters, as Back does`, async () => {
      await openFromOverview();
      await openList(list.nav);
      await list.filter();
      await eventually(() => new URL(page.url()).search !== '');
      const filtered = new URL(page.url());
      expect(Object.fromEntries(filtered.searchParams)).toEqual(list.query);
      await expectRows(list.table, list.nav === 'Customers' ? 10 : 50);
      const opened = bodyRows(list.table).nth(3).getByRole('link').first();
      const openedHref = await opened.getAttribute('href');
      await opened.click();
      await page.getByRole('heading', { level: 1, name: list.detailHeading }).waitFor();

      const crumb = page.getByRole('main').getByRole('link', { name: list.nav, exact: true });
      await expect(crumb.getAttribute('href')).resolves.toBe(`${filtered.pathname}${filtered.search}`);
      await crumb.click();
      await page.getByRole('heading', { level: 1, name: list.nav }).waitFor();
      expect(new URL(page.url()).search).toBe(filtered.search);
      expect(Object.fromEntries(new URL(page.url()).searchParams)).toEqual(list.query);
      await expectRows(list.table, list.nav === 'Customers' ? 10 : 50);
      // Back to where it was: the row that was opened has the focus, as after the browser's Back.
      await expect(
        settled(
          () => page.evaluate<string | null>("document.activeElement?.getAttribute('href') ?? null"),
          (href) => href === openedHref,
        ),
      ).resolves.toBe(openedHref);
      // Not a new history entry: Back from the list undoes its filter (docs/dashboard-ui.md,
      // "Filters and Back"), then leaves it, rather than reopening the row's page.
      await page.goBack();
      await eventually(() => new URL(page.url()).search === '');
      await page.getByRole('heading', { level: 1, name: list.nav }).waitFor();
      await page.goBack();
      await page.getByRole('heading', { level: 1, name: list.nav }).waitFor({ state: 'detached' });
      await expect(page.getByRole('heading', { level: 1, name: list.detailHeading }).count()).resolves.toBe(0);

      // Opened another way (its address, in a new tab), the breadcrumb is a link to the list.
      await page.goto(`${world.current.url}${openedHref}`);
      await page.getByRole('heading', { level: 1, name: list.detailHeading }).waitFor();
      await expect(crumb.getAttribute('href')).resolves.toBe(filtered.pathname);
      await crumb.click();
      await page.getByRole('heading', { level: 1, name: list.nav }).waitFor();
      expect(new URL(page.url()).search).toBe('');
    });
  }

  // Each list's filter change, as a user makes it: a select changed where the list was scrolled
  // to (selectOption does not scroll), or a search typed at the top and applied.
  const REFILTERED = [
    {
      nav: 'Campaigns',
      table: 'Recovery campaigns',
      filter: () => page.getByRole('combobox', { name: 'Status' }).selectOption({ label: 'In flight' }),
      scrolled: true,
    },
    {
      nav: 'Customers',
      table: 'Customers',
      filter: async () => {
        await page.getByRole('searchbox', { name: 'Search by email or name' }).fill('umbrella-customers');
        await page.getByRole('button', { name: 'Search customers' }).click();
      },
      scrolled: false,
    },
    {
      nav: 'Cancel sessions',
      table: 'Cancel sessions',
      filter: () => page.getByRole('combobox', { name: 'Outcome' }).selectOption({ label: 'Canceled' }),
      scrolled: true,
    },
  ];

  for (const list of REFILTERED) {
    it(`${list.nav}: Back from a filter change after Load more shows the 100 rows loaded before it, scrolled where they were`, async () => {
      await openFromOverview();
      await openTwoPages(list.nav, list.table);
      const row = bodyRows(list.table).nth(80).getByRole('link').first();
      const linkName = (await row.textContent())!;
      await row.scrollIntoViewIfNeeded();
      if (!list.scrolled) {
        // The search box is at the top: the list is left from where the box is in sight.
        await page.getByRole('searchbox', { name: 'Search by email or name' }).scrollIntoViewIfNeeded();
      }
      const scrollY = await page.evaluate<number>('window.scrollY');
      if (list.scrolled) expect(scrollY).toBeGreaterThan(1000);

      await list.filter();
      await eventually(() => new URL(page.url()).search !== '');
      await expectRows(list.table, 50);
      await page.goBack();

      await eventually(() => new URL(page.url()).search === '');
      await expectRows(list.table, 100);
      await expect(bodyRows(list.table).nth(80).getByRole('link').first().textContent()).resolves.toBe(linkName);
      const restoredY = await settled(
        () => page.evaluate<number>('window.scrollY'),
        (y) => Math.abs(y - scrollY) < 5,
      );
      expect(Math.abs(restoredY - scrollY)).toBeLessThan(5);
      // Forward to the filter: its own 50 rows, then Back to the 100 again.
      await page.goForward();
      await eventually(() => new URL(page.url()).search !== '');
      await expectRows(list.table, 50);
      await page.goBack();
      await eventually(() => new URL(page.url()).search === '');
      await expectRows(list.table, 100);
      // Load more goes on from where the restored rows end.
      await page.getByRole('button', { name: 'Load more' }).click();
      await expectRows(list.table, ROWS);
    });
  }

  it('a reload after Back to a filter is a fresh load: the first page, nothing kept', async () => {
    await openFromOverview();
    await openTwoPages('Campaigns', 'Recovery campaigns');
    await page.getByRole('combobox', { name: 'Status' }).selectOption({ label: 'In flight' });
    await eventually(() => new URL(page.url()).searchParams.get('status') === 'in_flight');
    await expectRows('Recovery campaigns', 50);
    await page.goBack();
    await expectRows('Recovery campaigns', 100);
    await page.reload();
    await page.getByRole('heading', { level: 1, name: 'Campaigns' }).waitFor();
    await expectRows('Recovery campaigns', 50);
  });

  it("a campaign's and a cancel session's customer is a link to the customer's page", async () => {
    for (const list of [
      { nav: 'Campaigns', table: 'Recovery campaigns' },
      { nav: 'Cancel sessions', table: 'Cancel sessions' },
    ]) {
      await openFromOverview();
      await openList(list.nav);
      const row = bodyRows(list.table).nth(5);
      const customer = row.getByRole('link', { name: /@umbrella-customers\.test$/ });
      const email = (await customer.textContent())!;
      expect(email).toMatch(/^customer\d{3}@umbrella-customers\.test$/);
      // The whole address on hover, as the column clips it.
      await expect(customer.getAttribute('title')).resolves.toBe(email);
      await customer.click();
      await page.getByRole('heading', { level: 1, name: email }).waitFor();
      expect(new URL(page.url()).pathname).toMatch(/^\/dashboard\/customers\/[0-9a-f-]{36}$/);
    }
  });

  it('a fresh visit (the nav link) starts from the first page, at the top', async () => {
    await openFromOverview();
    await openTwoPages('Campaigns', 'Recovery campaigns');
    await openList('Customers');
    await openList('Campaigns');
    await expectRows('Recovery campaigns', 50);
    await expect(page.evaluate<number>('window.scrollY')).resolves.toBe(0);
  });
});
