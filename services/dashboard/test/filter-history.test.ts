import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { BrowserContext, Page } from 'playwright-core';
import { hashPassword, loadFixtures } from '@retention/domain';
import { eventually, testSecretsKeyBytes } from '@retention/testkit';
import { PASSWORD, signInThroughForm, useDashboardWorld } from './support/dashboard-world.js';

/**
 * Filters and Back (docs/dashboard-ui.md, "Filters and Back"), on the Campaigns list in a real
 * headless Chromium against the real API: each filter picked is a history entry, so Back undoes
 * it, the select and the rows following the address, and Forward redoes it; a search applied is
 * one entry however many characters were typed; a date typed a digit at a time is one entry; the
 * zone the app fills in by itself is no entry of its own.
 */
const world = useDashboardWorld();

const EMAIL = 'owner@history.test';
const STATUSES = [
  ...Array.from({ length: 3 }, (_, index) => ({ name: `lost${index}`, status: 'lost' as const })),
  ...Array.from({ length: 2 }, (_, index) => ({ name: `recovered${index}`, status: 'recovered' as const })),
  ...Array.from({ length: 4 }, (_, index) => ({ name: `flight${index}`, status: 'in_flight' as const })),
];
let context: BrowserContext;
let page: Page;

beforeAll(async () => {
  const { db } = world.current;
  await loadFixtures(db, testSecretsKeyBytes(), {
    workspaces: [
      {
        key: 'history',
        name: 'History',
        users: [{ key: 'owner', email: EMAIL, role: 'owner' }],
        customers: STATUSES.map(({ name }) => ({
          key: name,
          email: `${name}@history-customers.test`,
          subscriptions: [{ key: `s-${name}` }],
        })),
        campaigns: STATUSES.map(({ name, status }) => ({
          customer: name,
          psp_invoice_id: `in_history_${name}`,
          status,
        })),
      },
    ],
  });
  await db('users')
    .where({ email: EMAIL })
    .update({ password_hash: await hashPassword(PASSWORD) });
  // en-US: the date field's segments are month, day, year, as the typed date below expects.
  context = await world.current.browser.newContext({ viewport: { width: 1280, height: 900 }, locale: 'en-US' });
  page = await context.newPage();
  page.setDefaultTimeout(10_000);
  await signInThroughForm(page, world.current.url, EMAIL);
}, 60_000);

afterAll(async () => {
  await context?.close();
});

const table = () => page.getByRole('table', { name: 'Recovery campaigns' });
const status = () => page.getByRole('combobox', { name: 'Status' });
const searchBox = () => page.getByRole('searchbox', { name: 'Search by invoice id, customer email or name' });
const query = () => Object.fromEntries(new URL(page.url()).searchParams);

/** The invoice ids the list shows, in order, once they are `expected` (10 s at most). */
async function expectInvoices(expected: string[]): Promise<void> {
  const read = () =>
    table()
      .getByRole('row')
      .filter({ has: page.getByRole('cell') })
      .getByRole('link', { name: /^in_history_/ })
      .allTextContents();
  await eventually(
    async () => JSON.stringify([...(await read())].sort()) === JSON.stringify([...expected].sort()),
  ).catch(() => undefined);
  expect([...(await read())].sort()).toEqual([...expected].sort());
}

const invoicesOf = (wanted?: string) =>
  STATUSES.filter(({ status: one }) => wanted === undefined || one === wanted).map(({ name }) => `in_history_${name}`);

/** Opens the Campaigns list from the Overview (a fresh visit, a history entry of its own). */
async function openCampaigns(): Promise<void> {
  const nav = page.getByRole('navigation', { name: 'Main' });
  await nav.getByRole('link', { name: 'Overview' }).click();
  await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
  await nav.getByRole('link', { name: 'Campaigns' }).click();
  await page.getByRole('heading', { level: 1, name: 'Campaigns' }).waitFor();
  await expectInvoices(invoicesOf());
}

describe('Filters and Back', () => {
  it('Back undoes each filter picked, the select and the rows with it, and Forward redoes it', async () => {
    await openCampaigns();

    await status().selectOption({ label: 'Lost' });
    await eventually(() => query().status === 'lost');
    await expectInvoices(invoicesOf('lost'));
    await status().selectOption({ label: 'Recovered' });
    await eventually(() => query().status === 'recovered');
    await expectInvoices(invoicesOf('recovered'));

    await page.goBack();
    await eventually(() => query().status === 'lost');
    expect(query()).toEqual({ status: 'lost' });
    await expect(status().inputValue()).resolves.toBe('lost');
    await expectInvoices(invoicesOf('lost'));

    await page.goBack();
    await eventually(() => new URL(page.url()).search === '');
    await page.getByRole('heading', { level: 1, name: 'Campaigns' }).waitFor();
    await expect(status().inputValue()).resolves.toBe('');
    await expectInvoices(invoicesOf());

    await page.goForward();
    await eventually(() => query().status === 'lost');
    await expect(status().inputValue()).resolves.toBe('lost');
    await expectInvoices(invoicesOf('lost'));
    await page.goForward();
    await eventually(() => query().status === 'recovered');
    await expect(status().inputValue()).resolves.toBe('recovered');
    await expectInvoices(invoicesOf('recovered'));

    // Back from the unfiltered list still leaves it for the page before.
    await page.goBack();
    await page.goBack();
    await eventually(() => new URL(page.url()).search === '');
    await page.goBack();
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
  });

  it('a search typed a character at a time and applied is one history entry: one Back goes to before it', async () => {
    await openCampaigns();
    const before = await page.evaluate<number>('history.length');
    await searchBox().pressSequentially('recovered');
    // Typing alone changes neither the address nor the history.
    expect(new URL(page.url()).search).toBe('');
    await searchBox().press('Enter');
    await eventually(() => query().q === 'recovered');
    await expectInvoices(invoicesOf('recovered'));
    await expect(page.evaluate<number>('history.length')).resolves.toBe(before + 1);

    await page.goBack();
    await eventually(() => new URL(page.url()).search === '');
    await expect(searchBox().inputValue()).resolves.toBe('');
    await expectInvoices(invoicesOf());
    await page.goBack();
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
  });

  it('a date typed a digit at a time is one history entry, though the field changed at each digit of the year', async () => {
    await openCampaigns();
    const from = page.getByLabel('First failed from');
    // Counts the field's changes on the field itself (an attribute React does not manage).
    await from.evaluate((field) => {
      field.setAttribute('data-changes', '0');
      field.addEventListener('input', () =>
        field.setAttribute('data-changes', String(Number(field.getAttribute('data-changes')) + 1)),
      );
    });
    const before = await page.evaluate<number>('history.length');
    await from.focus();
    await page.keyboard.type('05102026');
    await eventually(() => query().from === '2026-05-10');
    // The field did change more than once (a year of 1, 2, 3 digits, then 4): a burst, not one pick.
    await expect(from.getAttribute('data-changes').then(Number)).resolves.toBeGreaterThan(1);
    await expect(page.evaluate<number>('history.length')).resolves.toBe(before + 1);
    expect(query().tz).toBeTruthy();

    await page.goBack();
    await eventually(() => new URL(page.url()).search === '');
    await expect(from.inputValue()).resolves.toBe('');
    await expectInvoices(invoicesOf());
    await page.goForward();
    await eventually(() => query().from === '2026-05-10');
    await expect(from.inputValue()).resolves.toBe('2026-05-10');
  });

  it('the zone the app fills in for days without one replaces the entry: Back leaves the page', async () => {
    await openCampaigns();
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Overview' }).click();
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
    await page.goto(`${world.current.url}/dashboard/campaigns?from=2026-05-01`);
    await page.getByRole('heading', { level: 1, name: 'Campaigns' }).waitFor();
    await eventually(() => Boolean(query().tz));
    expect(query().from).toBe('2026-05-01');

    await page.goBack();
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
    expect(new URL(page.url()).searchParams.get('from')).toBeNull();
  });
});
