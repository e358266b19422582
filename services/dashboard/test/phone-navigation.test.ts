import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { BrowserContext, Locator, Page } from 'playwright-core';
import { hashPassword, loadFixtures } from '@retention/domain';
import { eventually, testSecretsKeyBytes } from '@retention/testkit';
import { desktopPage, PASSWORD, signInThroughForm, useDashboardWorld } from './support/dashboard-world.js';

/**
 * The main navigation on a phone (docs/dashboard-ui.md, "The navigation on a phone"): at 390 and
 * 320 px it takes the top bar's one row, a Menu button (a disclosure, `aria-expanded`) that shows
 * every page's link, each reached by the keyboard and by its role and name, in a real headless
 * Chromium against the real API. At 390 px it took two rows of its own under the top bar. At
 * 1280 px it is the side column of links, as before, with no Menu button.
 */
const world = useDashboardWorld();

const EMAIL = 'owner@phone-nav.test';
const PAGES = ['Overview', 'Campaigns', 'Customers', 'Cancel sessions', 'Settings'];
/** Campaigns in the list: at 390 px, many times the window's height. */
const CAMPAIGNS = 12;
let context: BrowserContext;
let page: Page;

beforeAll(async () => {
  const { db } = world.current;
  await loadFixtures(db, testSecretsKeyBytes(), {
    workspaces: [
      {
        key: 'phone',
        name: 'Pocket Co',
        users: [{ key: 'owner', email: EMAIL, role: 'owner' }],
        // A list longer than a phone's window, to scroll down (the top bar stays).
        customers: [{ key: 'c1', email: 'reader@pocket-customers.test', subscriptions: [{ key: 's1' }] }],
        campaigns: Array.from({ length: CAMPAIGNS }, (_, index) => ({
          key: `k${index}`,
          customer: 'c1',
          psp_invoice_id: `in_pocket_${index}`,
          status: 'in_flight' as const,
        })),
      },
    ],
  });
  await db('users')
    .where({ email: EMAIL })
    .update({ password_hash: await hashPassword(PASSWORD), name: 'Pat Phone' });
  ({ context, page } = await desktopPage(world.current.browser));
  await signInThroughForm(page, world.current.url, EMAIL);
}, 60_000);

afterAll(async () => {
  await context?.close();
});

const nav = () => page.getByRole('navigation', { name: 'Main' });
const menu = () => nav().getByRole('button', { name: 'Menu', exact: true });
const expanded = () => menu().getAttribute('aria-expanded');

/** The accessible name of the focused element (its text), and whether it is in the main navigation. */
const focused = () =>
  page.evaluate<{ name: string; inNav: boolean }>(`(() => {
    const active = document.activeElement;
    return { name: active?.textContent?.trim() ?? '', inNav: Boolean(active?.closest('nav[aria-label="Main"]')) };
  })()`);

/** Whether the element is drawn whole inside the window. */
const inWindow = (locator: Locator) =>
  locator.evaluate((element) => {
    const box = element.getBoundingClientRect();
    const view = element.ownerDocument.defaultView!;
    return (
      box.width > 0 && box.left >= 0 && box.top >= 0 && box.right <= view.innerWidth && box.bottom <= view.innerHeight
    );
  });

async function openPage(route: string, heading: string): Promise<void> {
  await page.goto(`${world.current.url}/dashboard${route}`);
  await page.getByRole('heading', { level: 1, name: heading }).waitFor();
}

describe('the navigation on a phone', () => {
  it.each([390, 320])(
    'at %i px takes the top bar’s one row, and its Menu button shows every page link, each reached by the keyboard',
    async (width) => {
      await page.setViewportSize({ width, height: 844 });
      await openPage('/campaigns', 'Campaigns');

      // One row: the navigation inside the top bar, the page's content right under the bar.
      const bar = (await page.getByRole('banner').boundingBox())!;
      const box = (await nav().boundingBox())!;
      const content = (await page.getByRole('main').boundingBox())!;
      expect(bar.height).toBe(56);
      expect(box.y).toBeGreaterThanOrEqual(bar.y);
      expect(box.y + box.height).toBeLessThanOrEqual(bar.y + bar.height);
      expect(content.y).toBeLessThanOrEqual(bar.y + bar.height + 1);
      await expect(inWindow(menu())).resolves.toBe(true);
      await expect(expanded()).resolves.toBe('false');
      await expect(nav().getByRole('link').count()).resolves.toBe(0);
      // Its controls target (aria-controls) is the list it shows.
      const controls = (await menu().getAttribute('aria-controls'))!;
      await expect(nav().locator(`[id="${controls}"]`).count()).resolves.toBe(1);

      // By the keyboard: Enter opens it, Tab goes through the five links in order, each in sight.
      await menu().focus();
      await page.keyboard.press('Enter');
      await expect(expanded()).resolves.toBe('true');
      const reached: string[] = [];
      for (const name of PAGES) {
        await page.keyboard.press('Tab');
        const now = await focused();
        if (now.inNav) reached.push(now.name);
        await expect(inWindow(nav().getByRole('link', { name, exact: true }))).resolves.toBe(true);
      }
      expect(reached).toEqual(PAGES);
      await expect(
        nav().getByRole('link', { name: 'Campaigns', exact: true }).getAttribute('aria-current'),
      ).resolves.toBe('page');
      // Escape closes it and puts the focus back on the button.
      await page.keyboard.press('Escape');
      await expect(expanded()).resolves.toBe('false');
      await expect(focused()).resolves.toEqual({ name: 'Menu', inNav: true });
      // Tab past its last link closes it too, as the focus leaves it.
      await page.keyboard.press('Enter');
      for (let index = 0; index <= PAGES.length; index += 1) await page.keyboard.press('Tab');
      await expect(focused()).resolves.toMatchObject({ inNav: false });
      await expect(expanded()).resolves.toBe('false');

      // By role and name, with a pointer: each link opens its page and closes the menu.
      for (const [name, heading] of [
        ['Cancel sessions', 'Cancel sessions'],
        ['Settings', 'API tokens'],
        ['Overview', 'Overview'],
      ] as const) {
        await menu().click();
        await nav().getByRole('link', { name, exact: true }).click();
        await page.getByRole('heading', { level: 1, name: heading }).waitFor();
        await eventually(async () => (await expanded()) === 'false');
      }
      // A tap outside (the page under it, at the window's bottom left) closes it.
      await menu().click();
      await expect(expanded()).resolves.toBe('true');
      await page.mouse.click(8, 836);
      await expect(expanded()).resolves.toBe('false');
      // Nothing wider than the window.
      await expect(page.evaluate<number>('document.documentElement.scrollWidth - window.innerWidth')).resolves.toBe(0);
    },
  );

  it('at 390 px keeps the top bar at the top of a long list scrolled down, its Menu button in reach and working', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    await openPage('/campaigns', 'Campaigns');
    await page.getByRole('link', { name: `in_pocket_${CAMPAIGNS - 1}` }).waitFor();
    await page.evaluate('window.scrollTo(0, document.documentElement.scrollHeight)');
    await eventually(async () => (await page.evaluate<number>('window.scrollY')) > 844);
    // The bar at the window's top, the Menu button in it: it scrolled away with the page.
    const bar = (await page.getByRole('banner').boundingBox())!;
    expect(bar.y).toBe(0);
    await expect(inWindow(menu())).resolves.toBe(true);
    // It opens there, its links under the bar, over the list; and one opens its page.
    await menu().click();
    await expect(expanded()).resolves.toBe('true');
    const list = (await nav().getByRole('list').boundingBox())!;
    expect(list.y).toBeGreaterThanOrEqual(bar.height - 4);
    for (const name of PAGES)
      await expect(inWindow(nav().getByRole('link', { name, exact: true }))).resolves.toBe(true);
    await nav().getByRole('link', { name: 'Customers', exact: true }).click();
    await page.getByRole('heading', { level: 1, name: 'Customers' }).waitFor();
    await eventually(async () => (await expanded()) === 'false');
    // Something scrolled to (a row, a #target, the focus) stops below the bar, not under it.
    await openPage('/campaigns', 'Campaigns');
    const middle = page.getByRole('link', { name: `in_pocket_${CAMPAIGNS / 2}` });
    const top = await middle.evaluate((element) => {
      element.scrollIntoView({ block: 'start' });
      return element.getBoundingClientRect().top;
    });
    expect(top).toBeGreaterThanOrEqual(bar.height);
    await expect(page.evaluate<number>('window.scrollY')).resolves.toBeGreaterThan(0);
    // Nothing wider than the window.
    await expect(page.evaluate<number>('document.documentElement.scrollWidth - window.innerWidth')).resolves.toBe(0);
  });

  it('at 1280 px is the side column of links, with no Menu button', async () => {
    await page.setViewportSize({ width: 1280, height: 900 });
    await openPage('/campaigns', 'Campaigns');
    await expect(menu().count()).resolves.toBe(0);
    const links = await nav().getByRole('link').all();
    expect(await Promise.all(links.map((link) => link.textContent()))).toEqual(PAGES);
    const boxes = await Promise.all(links.map(async (link) => (await link.boundingBox())!));
    // One above the other, in the 220 px column.
    expect(new Set(boxes.map((box) => box.x)).size).toBe(1);
    expect(boxes.every((box, index) => index === 0 || box.y > boxes[index - 1]!.y)).toBe(true);
    expect(Math.max(...boxes.map((box) => box.x + box.width))).toBeLessThanOrEqual(220);
    // The top bar scrolls with the page, as before: it stays at the top on a phone only.
    await expect(
      page.getByRole('banner').evaluate((bar) => bar.ownerDocument.defaultView!.getComputedStyle(bar).position),
    ).resolves.toBe('static');
  });
});
