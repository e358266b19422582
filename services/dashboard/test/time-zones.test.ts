import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { BrowserContext, Page } from 'playwright-core';
import { hashPassword, loadFixtures } from '@retention/domain';
import { eventually, testSecretsKeyBytes } from '@retention/testkit';
import { PASSWORD, signInThroughForm, useDashboardWorld } from './support/dashboard-world.js';

/**
 * The Campaigns list's days and the dashboard's formats across zones and browser languages
 * (docs/dashboard-ui.md, "Campaign date filters" and "Locale"), in a real Chromium whose context
 * sets `timezoneId` and `locale`, as support agents in Auckland (de-DE) and Los Angeles (en-US).
 *
 * One link, `from=2026-11-01&to=2026-11-02` (Nov 1, one day), and three campaigns around it:
 * - in_akl_early, 2026-10-31 12:00 UTC: Nov 1, 1 AM in Auckland, Oct 31 in Los Angeles;
 * - in_both, 2026-11-01 10:00 UTC: Nov 1 in both (11 PM in Auckland, 2 AM in Los Angeles);
 * - in_la_late, 2026-11-01 20:00 UTC: Nov 2, 9 AM in Auckland, Nov 1 noon in Los Angeles.
 * So Auckland's Nov 1 holds the first two, Los Angeles's the last two.
 */
const world = useDashboardWorld();

const EMAIL = 'agent@zones.test';
const ALL = ['in_akl_early', 'in_both', 'in_la_late'];

const contexts: BrowserContext[] = [];
let session: Awaited<ReturnType<BrowserContext['storageState']>> | undefined;

beforeAll(async () => {
  const { db } = world.current;
  await loadFixtures(db, testSecretsKeyBytes(), {
    workspaces: [
      {
        key: 'zones',
        name: 'Zones',
        display_currency: 'usd',
        users: [{ key: 'agent', email: EMAIL, role: 'owner' }],
        customers: [{ key: 'z', email: 'zed@example.com', subscriptions: [{ key: 'z-sub' }] }],
        campaigns: [
          {
            customer: 'z',
            psp_invoice_id: 'in_akl_early',
            amount_cents: 254_719,
            currency: 'usd',
            status: 'in_flight',
            first_failed_at: '2026-10-31T12:00:00.000Z',
          },
          {
            customer: 'z',
            psp_invoice_id: 'in_both',
            amount_cents: 1_000,
            currency: 'usd',
            status: 'in_flight',
            first_failed_at: '2026-11-01T10:00:00.000Z',
          },
          {
            customer: 'z',
            psp_invoice_id: 'in_la_late',
            amount_cents: 2_000,
            currency: 'usd',
            status: 'in_flight',
            first_failed_at: '2026-11-01T20:00:00.000Z',
          },
        ],
      },
    ],
  });
  await db('users')
    .where({ email: EMAIL })
    .update({ password_hash: await hashPassword(PASSWORD), name: 'Zed Agent' });
}, 120_000);

afterAll(async () => {
  await Promise.all(contexts.map((context) => context.close()));
});

/** A signed-in page in a browser context of its own, in `timezoneId` with the browser language `locale`. */
async function agent(timezoneId: string, locale = 'en-US', viewport = { width: 1280, height: 900 }): Promise<Page> {
  const context = await world.current.browser.newContext({
    viewport,
    acceptDownloads: true,
    timezoneId,
    locale,
    ...(session && { storageState: session }),
  });
  contexts.push(context);
  const page = await context.newPage();
  page.setDefaultTimeout(10_000);
  if (!session) {
    await signInThroughForm(page, world.current.url, EMAIL);
    session = await context.storageState();
  }
  return page;
}

async function openCampaigns(page: Page, search = ''): Promise<void> {
  await page.goto(`${world.current.url}/dashboard/campaigns${search}`);
  await page.getByRole('heading', { level: 1, name: 'Campaigns' }).waitFor();
}

/** The list's invoices, sorted, once the list shows `expected` (or what it shows after a wait). */
async function settlesTo(page: Page, expected: string[]): Promise<void> {
  let last: string[] = [];
  await eventually(async () => {
    last = (
      await page.getByRole('table', { name: 'Recovery campaigns' }).locator('tbody tr td:first-child').allTextContents()
    ).sort();
    return JSON.stringify(last) === JSON.stringify(expected);
  }).catch(() => undefined);
  expect(last).toEqual(expected);
}

describe('formats in a de-DE browser', () => {
  it('writes money, days and months in English, as the page reads', async () => {
    const berlin = await agent('Europe/Berlin', 'de-DE');
    await openCampaigns(berlin);
    await settlesTo(berlin, ALL);
    const early = berlin.getByRole('row').filter({ hasText: 'in_akl_early' });
    await expect(early.getByRole('cell').nth(2).textContent()).resolves.toBe('$2,547.19');
    // Oct 31, 1 PM in Berlin, written as an English list writes it (not "31. Okt.").
    await expect(early.getByRole('cell').nth(5).textContent()).resolves.toBe('Oct 31');

    await berlin.goto(`${world.current.url}/dashboard/`);
    await berlin.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
    // The chart's table (in its disclosure): months and amounts as the page's English writes them.
    const revenue = berlin.getByRole('figure', { name: 'Failed and recovered revenue by month (USD)' });
    await revenue.waitFor();
    const table = await revenue.locator('table').textContent();
    expect(table).toContain('Oct 2026');
    expect(table).toContain('$2,547.19');
    expect(table).not.toMatch(/Okt|Nov\.|\d,\d\d\s?\$/);
  });

  it('keeps an English browser’s own conventions: en-GB writes the day first', async () => {
    const london = await agent('Europe/London', 'en-GB');
    await openCampaigns(london);
    await settlesTo(london, ALL);
    const early = london.getByRole('row').filter({ hasText: 'in_akl_early' });
    await expect(early.getByRole('cell').nth(2).textContent()).resolves.toBe('US$2,547.19');
    await expect(early.getByRole('cell').nth(5).textContent()).resolves.toBe('31 Oct');
  });
});
