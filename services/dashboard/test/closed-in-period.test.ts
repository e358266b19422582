import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { BrowserContext, Locator, Page } from 'playwright-core';
import { hashPassword, loadFixtures } from '@retention/domain';
import { testSecretsKeyBytes } from '@retention/testkit';
import { desktopPage, PASSWORD, signInThroughForm, useDashboardWorld } from './support/dashboard-world.js';
import { screenshot, seriousViolations } from './support/page-checks.js';

/**
 * The Overview's "Closed in …" section (docs/dashboard-ui.md, "Closed in the period"): the money
 * won back and lost on the period's UTC days, whenever the campaigns opened, beside the cohort
 * cards, in a real headless Chromium against the real dashboard API. Found by role and name.
 */
const world = useDashboardWorld();

const DAY = 86_400_000;
const now = Math.floor(Date.now() / 60_000) * 60_000;
const daysAgo = (days: number) => new Date(now - days * DAY).toISOString();
const EMAIL = 'owner@closers.test';

/**
 * The workspace's campaigns: [currency, amount, status, opened days ago, closed days ago]. EUR
 * converts at the shipped 0.92 per dollar (EUR 92.00 = USD 100.00).
 */
const CAMPAIGNS = [
  ['usd', 12_000, 'recovered', 70, 10], // opened before the last 30 days, recovered in them
  ['eur', 9_200, 'recovered', 3, 1], // opened and recovered in them
  ['usd', 5_000, 'lost', 40, 2],
  ['usd', 2_500, 'abandoned', 5, 4],
  ['usd', 7_000, 'in_flight', 2, null], // opened in them, still open: in neither closed figure
  ['usd', 1_000, 'recovered', 100, 50], // closed before them
] as const;

let context: BrowserContext;
let page: Page;

beforeAll(async () => {
  const { db } = world.current;
  await loadFixtures(db, testSecretsKeyBytes(), {
    workspaces: [
      {
        key: 'closers',
        name: 'Closers',
        display_currency: 'usd',
        users: [{ key: 'owner', email: EMAIL, role: 'owner' }],
        customers: [{ key: 'c', email: 'cora@example.com', subscriptions: [{ key: 'c-sub' }] }],
        campaigns: CAMPAIGNS.map(([currency, amount_cents, status, opened, closed]) => ({
          customer: 'c',
          currency,
          amount_cents,
          status,
          first_failed_at: daysAgo(opened),
          ...(status === 'recovered' && { recovered_via: 'retry' as const, recovered_at: daysAgo(closed) }),
          ...(closed !== null && { closed_at: daysAgo(closed) }),
        })),
      },
    ],
  });
  await db('users')
    .where({ email: EMAIL })
    .update({ password_hash: await hashPassword(PASSWORD), name: 'Cora Closer' });
  ({ context, page } = await desktopPage(world.current.browser));
  await signInThroughForm(page, world.current.url, EMAIL);
}, 60_000);

afterAll(async () => {
  await context?.close();
});

/** The section's texts in the order a screen reader reads them: heading, line, then each term and its definitions. */
function texts(section: Locator): Promise<string[]> {
  return section.locator('h2, p, dt, dd').allTextContents();
}

const money = (cents: number) =>
  new Intl.NumberFormat('en-US', { style: 'currency', currency: 'USD' }).format(cents / 100);

describe('the Overview\u2019s closed in the period', () => {
  it('shows the money recovered and lost on the last 30 days, whenever the campaigns opened, apart from the cohort cards', async () => {
    const section = page.getByRole('region', { name: 'Closed in the last 30 days' });
    await section.getByRole('definition').first().waitFor();
    await expect(texts(section)).resolves.toEqual([
      'Closed in the last 30 days',
      'By the UTC day each campaign closed, whenever its first payment failed; amounts in USD. ' +
        'The cards above count campaigns by the day they opened.',
      'Recovered',
      '$220.00', // USD 120.00 + EUR 92.00
      '2 campaigns',
      'Lost',
      '$75.00', // lost and abandoned
      '2 campaigns lost or abandoned',
    ]);
    // The cohort card beside it counts only the recovered campaign that opened in the period.
    const cohort = page.getByRole('region', { name: 'Key figures' });
    await expect(
      cohort
        .getByRole('term')
        .filter({ hasText: /^Recovered revenue$/ })
        .locator('xpath=..')
        .getByRole('definition')
        .first()
        .textContent(),
    ).resolves.toBe('$100.00');
    await expect(seriousViolations(page, 'overview')).resolves.toEqual([]);
    // Directly after the cards, before the decline breakdown; the cards headed by their own basis
    // as a group of the same rank, so the two groups' figures read as two views, not a contradiction.
    const headings = await page.getByRole('heading', { level: 2 }).allTextContents();
    expect(headings.slice(0, 3)).toEqual([
      'Opened in the last 30 days',
      'Closed in the last 30 days',
      'Why payments fail',
    ]);
    await expect(cohort.getByRole('heading', { level: 2 }).textContent()).resolves.toBe('Opened in the last 30 days');
  });

  it('names a calendar month by its name and ends where it ends', async () => {
    await page.goto(`${world.current.url}/dashboard/?period=last_month`);
    const today = new Date(now);
    const start = Date.UTC(today.getUTCFullYear(), today.getUTCMonth() - 1, 1);
    const end = Date.UTC(today.getUTCFullYear(), today.getUTCMonth(), 1);
    const month = new Intl.DateTimeFormat('en-US', { month: 'short', year: 'numeric', timeZone: 'UTC' }).format(start);
    // The seeded closes that fall in last month's UTC days, counted here as the page should.
    const inMonth = CAMPAIGNS.filter(([, , , , closed]) => {
      if (closed === null) return false;
      const at = Date.parse(daysAgo(closed));
      return at >= start && at < end;
    });
    const of = (statuses: readonly string[]) => inMonth.filter(([, , status]) => statuses.includes(status));
    const usd = (rows: typeof inMonth) =>
      rows.reduce((sum, [currency, amount]) => sum + (currency === 'eur' ? Math.round(amount / 0.92) : amount), 0);
    const count = (rows: typeof inMonth) => `${rows.length} ${rows.length === 1 ? 'campaign' : 'campaigns'}`;
    const section = page.getByRole('region', { name: `Closed in ${month}` });
    await section.getByRole('definition').first().waitFor();
    // The cards' group is headed by the same month, by the day the campaigns opened.
    await expect(
      page.getByRole('region', { name: 'Key figures' }).getByRole('heading', { level: 2 }).textContent(),
    ).resolves.toBe(`Opened in ${month}`);
    const recovered = of(['recovered']);
    const lost = of(['lost', 'abandoned']);
    await expect(texts(section)).resolves.toEqual([
      `Closed in ${month}`,
      expect.stringMatching(/^By the UTC day each campaign closed/),
      'Recovered',
      money(usd(recovered)),
      count(recovered),
      'Lost',
      money(usd(lost)),
      `${count(lost)} lost or abandoned`,
    ]);
  });

  it('sits its two cards side by side inside a 390 px screen, as at 1280 px', async () => {
    for (const width of [1280, 390]) {
      await page.setViewportSize({ width, height: 900 });
      await page.goto(`${world.current.url}/dashboard/`);
      const section = page.getByRole('region', { name: 'Closed in the last 30 days' });
      await section.getByRole('definition').first().waitFor();
      await screenshot(page, `closed-in-period-${width}`);
      const cards = await section.getByRole('term').evaluateAll((terms) =>
        terms.map((term) => {
          const card = term.parentElement!.getBoundingClientRect();
          return { top: Math.round(card.top), left: card.left, right: card.right };
        }),
      );
      expect({ width, top: cards[1]!.top }).toEqual({ width, top: cards[0]!.top });
      expect(cards[1]!.left).toBeGreaterThan(cards[0]!.right);
      expect(cards[1]!.right).toBeLessThanOrEqual(width);
      await expect(
        page.evaluate<number>('document.documentElement.scrollWidth - window.innerWidth'),
      ).resolves.toBeLessThanOrEqual(0);
    }
    await page.setViewportSize({ width: 1280, height: 900 });
  });

  /**
   * An older API during a rolling deploy: the real server's answer to one overview request, with
   * a field taken out on its way to the page (Playwright's route), the stand-in for that version.
   */
  async function answerOnceWithout(field: string): Promise<void> {
    await page.route(
      '**/dashboard/api/overview?*',
      async (route) => {
        const response = await route.fetch();
        const body = (await response.json()) as Record<string, unknown>;
        delete body[field];
        await route.fulfill({ response, json: body });
      },
      { times: 1 },
    );
  }

  it('leaves the closed figures out when the API answers without them, the rest of the page shown', async () => {
    await page.setViewportSize({ width: 1280, height: 900 });
    await answerOnceWithout('closed_in_period');
    await page.goto(`${world.current.url}/dashboard/`);
    await page.getByRole('region', { name: 'Key figures' }).getByRole('definition').first().waitFor();
    await page.getByRole('region', { name: 'Why payments fail' }).waitFor();
    await expect(page.getByRole('region', { name: 'Closed in the last 30 days' }).count()).resolves.toBe(0);
    await expect(page.getByRole('heading', { name: 'This page could not be shown' }).count()).resolves.toBe(0);
  });

  it('says a page that cannot be shown in words inside the shell, whose navigation leads on to other pages', async () => {
    await page.setViewportSize({ width: 1280, height: 900 });
    // Without `stats` the cards cannot render: the page throws.
    await answerOnceWithout('stats');
    await page.goto(`${world.current.url}/dashboard/`);
    await page.getByRole('heading', { level: 1, name: 'This page could not be shown' }).waitFor();
    await page.getByRole('button', { name: 'Reload' }).waitFor();
    await screenshot(page, 'page-error-1280');
    // Nothing technical: no error message, no stack.
    const main = await page.getByRole('main').textContent();
    expect(main).not.toMatch(/undefined|TypeError|Cannot read|at \w+ \(/);
    // The shell stays: the navigation and the account menu.
    const nav = page.getByRole('navigation', { name: 'Main' });
    await page.getByRole('button', { name: /Account menu/ }).waitFor();
    await nav.getByRole('link', { name: 'Campaigns' }).click();
    await page.getByRole('heading', { level: 1, name: 'Campaigns' }).waitFor();
    await expect(page.getByRole('heading', { name: 'This page could not be shown' }).count()).resolves.toBe(0);
    // Back to the Overview (the route answered once): it renders again.
    await nav.getByRole('link', { name: 'Overview' }).click();
    await page.getByRole('region', { name: 'Key figures' }).getByRole('definition').first().waitFor();
    await expect(page.getByRole('heading', { name: 'This page could not be shown' }).count()).resolves.toBe(0);
  });
});
