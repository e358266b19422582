import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { BrowserContext, Page, Request } from 'playwright-core';
import { hashPassword, loadFixtures } from '@retention/domain';
import { testSecretsKeyBytes } from '@retention/testkit';
import { PASSWORD, signInThroughForm, useDashboardWorld } from './support/dashboard-world.js';

/**
 * Loading a page's code (docs/dashboard-ui.md, "Loading a page's code"), in a real headless
 * Chromium against the real API: each page is a chunk of its own, shown as soon as it is in
 * (never held back by a timer, as React's Suspense held it 300 ms), asked for beside the app's
 * first request rather than after it, and said in words with a reload when it cannot be loaded.
 */
const world = useDashboardWorld();

const EMAIL = 'owner@hooli.test';
let signedIn: Awaited<ReturnType<BrowserContext['storageState']>>;
const contexts: BrowserContext[] = [];

beforeAll(async () => {
  const { db } = world.current;
  await loadFixtures(db, testSecretsKeyBytes(), {
    workspaces: [
      {
        key: 'hooli',
        name: 'Hooli',
        users: [{ key: 'owner', email: EMAIL, role: 'owner' }],
        customers: [{ key: 'c1', email: 'gavin@hooli-customers.test', subscriptions: [{ key: 's1' }] }],
        campaigns: [{ customer: 'c1', psp_invoice_id: 'in_loading_1', status: 'in_flight' as const }],
      },
    ],
  });
  await db('users')
    .where({ email: EMAIL })
    .update({ password_hash: await hashPassword(PASSWORD) });
  const context = await world.current.browser.newContext();
  const page = await context.newPage();
  await signInThroughForm(page, world.current.url, EMAIL);
  signedIn = await context.storageState();
  await context.close();
}, 60_000);

afterAll(async () => {
  for (const context of contexts) await context.close();
});

/**
 * A tab of a browser of its own, signed in, opened on nothing yet (its own: a clock installed
 * in one test is the whole browser context's).
 */
async function newTab(): Promise<Page> {
  const context = await world.current.browser.newContext({
    viewport: { width: 1280, height: 900 },
    storageState: signedIn,
  });
  contexts.push(context);
  const page = await context.newPage();
  page.setDefaultTimeout(10_000);
  return page;
}

const chunkOf = (name: string) => new RegExp(`/dashboard/assets/${name}-[^/]+\\.js$`);

describe('a page whose code is not loaded yet', () => {
  it('is shown as soon as its code and data are in, with no timer needed (the clock stopped)', async () => {
    const page = await newTab();
    // Timers never fire: React's Suspense revealed a lazy page only from a 300 ms timer after its
    // fallback, so with time stopped the page stayed "Loading…" for good.
    await page.clock.install();
    await page.clock.pauseAt(Date.now() + 60_000);
    await page.goto(`${world.current.url}/dashboard/campaigns`);
    await page.getByRole('link', { name: 'in_loading_1' }).waitFor();

    // Opened from the navigation (its code not loaded yet), and a Settings section (two chunks).
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Customers' }).click();
    await page.getByRole('heading', { level: 1, name: 'Customers' }).waitFor();
    await page.getByRole('link', { name: 'gavin@hooli-customers.test' }).waitFor();
    await page.goto(`${world.current.url}/dashboard/settings/webhooks`);
    await page.getByRole('heading', { level: 1, name: 'Outbound webhooks' }).waitFor();
    await page.close();
  }, 60_000);

  it('has its code asked for beside the first request for the session, not after its answer', async () => {
    const page = await newTab();
    let chunkAsked = false;
    const seen = new Promise<void>((resolve) => {
      page.on('request', (request: Request) => {
        if (chunkOf('CancelSessions').test(request.url())) {
          chunkAsked = true;
          resolve();
        }
      });
    });
    let chunkAskedBeforeSessionAnswered: boolean | undefined;
    await page.route('**/dashboard/api/me', async (route) => {
      // Holds the answer until the page's code has been asked for (5 s at most).
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([seen, new Promise((resolve) => (timer = setTimeout(resolve, 5_000)))]);
      clearTimeout(timer);
      chunkAskedBeforeSessionAnswered = chunkAsked;
      await route.continue();
    });
    await page.goto(`${world.current.url}/dashboard/cancel-sessions`);
    await page.getByRole('heading', { level: 1, name: 'Cancel sessions' }).waitFor();
    expect(chunkAskedBeforeSessionAnswered).toBe(true);
    await page.close();
  }, 60_000);

  it('has the code of the page signing in leads to loaded while the sign-in form is shown', async () => {
    const anonymous = await world.current.browser.newContext();
    contexts.push(anonymous);
    const page = await anonymous.newPage();
    const overviewAsked = page.waitForRequest(chunkOf('Overview'), { timeout: 10_000 });
    const customersAsked = page.waitForRequest(chunkOf('Customers'), { timeout: 10_000 });
    await page.goto(`${world.current.url}/dashboard/sign-in`);
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    await expect(overviewAsked).resolves.toBeTruthy();
    // Sent to sign in from a page: that page's code.
    await page.goto(`${world.current.url}/dashboard/sign-in?next=${encodeURIComponent('/customers?tag=vip')}`);
    await expect(customersAsked).resolves.toBeTruthy();
  }, 60_000);

  it('says it could not be loaded, with a reload that shows it, when its code cannot be fetched', async () => {
    const page = await newTab();
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    // As after a deploy that replaced the build this tab was opened with: the old chunk is gone.
    await page.route(chunkOf('Customers'), (route) => route.abort());
    await page.goto(`${world.current.url}/dashboard/`);
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Customers' }).click();

    const alert = page.getByRole('alert');
    await expect(alert.textContent()).resolves.toContain('This page could not be loaded');
    // The shell stays: the navigation still works, and nothing was thrown to the window.
    await expect(
      page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Overview' }).isVisible(),
    ).resolves.toBe(true);
    expect(errors).toEqual([]);

    await page.unroute(chunkOf('Customers'));
    await alert.getByRole('button', { name: 'Reload' }).click();
    await page.getByRole('heading', { level: 1, name: 'Customers' }).waitFor();
    await page.getByRole('link', { name: 'gavin@hooli-customers.test' }).waitFor();
    await page.close();
  }, 60_000);
});
