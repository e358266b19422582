import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { BrowserContext, Page } from 'playwright-core';
import { hashPassword, loadFixtures } from '@retention/domain';
import { eventually, testSecretsKeyBytes } from '@retention/testkit';
import { desktopPage, PASSWORD, signInThroughForm, useDashboardWorld } from './support/dashboard-world.js';

/**
 * Sorting a list (docs/dashboard-ui.md, "Sorting") in a real headless Chromium against the real
 * API: a column header's button sorts the list, its `<th>` says the order (`aria-sort`), the
 * order is in the address (kept on reload), the list starts again at its first page and Load
 * more goes on in the same order, the count stays, and the export asks for the same order. On a
 * phone (390 px), where the rows are stacked and the header row is out of sight, Sort by does it.
 */
const world = useDashboardWorld();

const EMAIL = 'owner@sorting.test';
const USD = 57;
const pad = (index: number) => String(index).padStart(3, '0');
/** Campaign i: in_sort_<i>, first failed i minutes after the start; amounts distinct, in no order of i. */
const CAMPAIGNS = Array.from({ length: 60 }, (_, index) => ({
  invoice: `in_sort_${pad(index)}`,
  currency: index < USD ? 'usd' : 'eur',
  amount: (((index * 37) % 60) + 1) * 100,
  minute: index,
}));
let context: BrowserContext;
let page: Page;
let base: string;

beforeAll(async () => {
  const { db } = world.current;
  const start = Date.now() - 10 * 86_400_000;
  await loadFixtures(db, testSecretsKeyBytes(), {
    workspaces: [
      {
        key: 'sorting',
        name: 'Sorting',
        users: [{ key: 'owner', email: EMAIL, role: 'owner' }],
        customers: [{ key: 'c', email: 'payer@sorting-customers.test', subscriptions: [{ key: 's' }] }],
        campaigns: CAMPAIGNS.map((campaign) => ({
          customer: 'c',
          psp_invoice_id: campaign.invoice,
          amount_cents: campaign.amount,
          currency: campaign.currency,
          status: 'in_flight' as const,
          first_failed_at: new Date(start + campaign.minute * 60_000).toISOString(),
        })),
      },
    ],
  });
  await db('users')
    .where({ email: EMAIL })
    .update({ password_hash: await hashPassword(PASSWORD), name: 'Sorting Owner' });
  ({ context, page } = await desktopPage(world.current.browser));
  base = world.current.url;
  await signInThroughForm(page, base, EMAIL);
}, 60_000);

afterAll(async () => {
  await context?.close();
});

type Campaign = (typeof CAMPAIGNS)[number];
/** The invoices in an order: by (currency, amount) either way, or by first failure either way. */
const byAmount = (descending: boolean) => {
  const smallest = [...CAMPAIGNS]
    .sort((a: Campaign, b: Campaign) =>
      a.currency === b.currency ? a.amount - b.amount : a.currency < b.currency ? -1 : 1,
    )
    .map((campaign) => campaign.invoice);
  return descending ? smallest.reverse() : smallest;
};
const byFailure = (descending: boolean) => {
  const oldest = CAMPAIGNS.map((campaign) => campaign.invoice);
  return descending ? oldest.reverse() : oldest;
};

const table = () => page.getByRole('table', { name: 'Recovery campaigns' });
/** The invoice of each row shown (each row's first cell), in order. */
const invoices = () => table().locator('tbody tr td:first-child').allTextContents();

/** Waits (10 s at most) until the rows shown are `expected`. */
async function expectInvoices(expected: string[]): Promise<void> {
  let last: string[] = [];
  await eventually(async () => JSON.stringify((last = await invoices())) === JSON.stringify(expected)).catch(
    () => undefined,
  );
  expect(last).toEqual(expected);
}

/** The aria-sort of each sortable column's header: null where it has none. */
async function ariaSorts(): Promise<Record<string, string | null>> {
  const header = (name: string) => table().getByRole('columnheader', { name });
  return {
    Amount: await header('Amount').getAttribute('aria-sort'),
    'First failed': await header('First failed').getAttribute('aria-sort'),
  };
}

const focusedSort = () => page.evaluate<string | null>("document.activeElement?.getAttribute('data-sort') ?? null");
const sortParam = () => new URL(page.url()).searchParams.get('sort');

describe('Sorting the campaigns list', () => {
  it('a header button sorts by amount, largest first then smallest, kept in the address, on reload and through Load more', async () => {
    await page.goto(`${base}/dashboard/campaigns`);
    await expectInvoices(byFailure(true).slice(0, 50));
    expect(await ariaSorts()).toEqual({ Amount: null, 'First failed': 'descending' });
    await page.getByText('60 campaigns', { exact: true }).waitFor();

    const amount = table().getByRole('button', { name: 'Amount' });
    await amount.click();
    await expectInvoices(byAmount(true).slice(0, 50));
    expect(sortParam()).toBe('-amount');
    expect(await ariaSorts()).toEqual({ Amount: 'descending', 'First failed': null });
    // The focus is back on the button once the sorted rows are in; the count is the same.
    await eventually(async () => (await focusedSort()) === 'amount');
    await page.getByText('60 campaigns', { exact: true }).waitFor();
    await page.getByText('Amounts are sorted within each currency', { exact: false }).waitFor();
    // The live region says the new order with the rows it brought.
    await page
      .getByRole('status')
      .filter({ hasText: 'Sorted by Amount, largest first. 50 campaigns shown, more available' })
      .waitFor({ state: 'attached' });
    // The export asks for the list's order.
    const href = await page.getByRole('link', { name: 'Export CSV' }).getAttribute('href');
    expect(new URL(href!, base).searchParams.get('sort')).toBe('-amount');

    // Again: smallest first. Load more goes on in that order.
    await page.keyboard.press('Enter');
    await expectInvoices(byAmount(false).slice(0, 50));
    expect(sortParam()).toBe('amount');
    expect(await ariaSorts()).toEqual({ Amount: 'ascending', 'First failed': null });
    await page.getByRole('button', { name: 'Load more' }).click();
    await expectInvoices(byAmount(false));

    // A bookmark of it: reloaded, the same order, from its first page.
    await page.reload();
    await expectInvoices(byAmount(false).slice(0, 50));
    expect(await ariaSorts()).toEqual({ Amount: 'ascending', 'First failed': null });

    // First failed: newest first (the default), which the address writes as no sort; then oldest first.
    await table().getByRole('button', { name: 'First failed' }).click();
    await expectInvoices(byFailure(true).slice(0, 50));
    expect(sortParam()).toBeNull();
    expect(await ariaSorts()).toEqual({ Amount: null, 'First failed': 'descending' });
    await table().getByRole('button', { name: 'First failed' }).click();
    await expectInvoices(byFailure(false).slice(0, 50));
    expect(sortParam()).toBe('first_failed_at');
    expect(await ariaSorts()).toEqual({ Amount: null, 'First failed': 'ascending' });
  });

  it('an address with a sort the list does not have says so in place of the list', async () => {
    await page.goto(`${base}/dashboard/campaigns?sort=-amount_cents`);
    await page.getByText('The address asks for the sort “-amount_cents”, which this list does not have.').waitFor();
    expect(await table().count()).toBe(0);
  });

  it('at 390 px, with stacked rows, Sort by sorts the list and the hidden header buttons leave the Tab order', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    try {
      await page.goto(`${base}/dashboard/campaigns`);
      await expectInvoices(byFailure(true).slice(0, 50));
      const sortBy = page.getByRole('combobox', { name: 'Sort by' });
      await sortBy.waitFor();
      expect(await table().getByRole('button', { name: 'Amount' }).getAttribute('tabindex')).toBe('-1');
      await sortBy.selectOption({ label: 'Amount, largest first' });
      await expectInvoices(byAmount(true).slice(0, 50));
      expect(sortParam()).toBe('-amount');
      expect(await ariaSorts()).toEqual({ Amount: 'descending', 'First failed': null });
      // The focus is back on Sort by, which shows the order.
      await eventually(async () => page.evaluate<boolean>("document.activeElement?.tagName === 'SELECT'")).catch(() => {
        throw new Error('the focus is not back on Sort by');
      });
      expect(await page.getByRole('combobox', { name: 'Sort by' }).inputValue()).toBe('-amount');
    } finally {
      await page.setViewportSize({ width: 1280, height: 900 });
    }
    // Wide again, Sort by is gone: the headers sort.
    await eventually(async () => !(await page.getByRole('combobox', { name: 'Sort by' }).isVisible())).catch(() => {
      throw new Error('Sort by is still shown at 1280 px');
    });
    expect(await table().getByRole('button', { name: 'Amount' }).getAttribute('tabindex')).toBeNull();
  });
});
