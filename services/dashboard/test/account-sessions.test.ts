import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { BrowserContext, Page } from 'playwright-core';
import { desktopPage, signInThroughForm, useDashboardWorld } from './support/dashboard-world.js';
import { description } from './support/field-errors.js';
import { checkPage } from './support/page-checks.js';

/**
 * The Account page's Sessions list: two browser contexts (two devices) signed in as the same
 * member; the one on the Account page signs the other out, whose next action asks to sign in
 * again. Real headless Chromium against the real API, PostgreSQL and Redis; controls by role
 * and accessible name.
 */
const world = useDashboardWorld();
const contexts: BrowserContext[] = [];

async function device(): Promise<Page> {
  const { context, page } = await desktopPage(world.current.browser);
  contexts.push(context);
  return page;
}

afterAll(async () => {
  await Promise.all(contexts.map((context) => context.close()));
});

let here: Page;
let other: Page;

beforeAll(async () => {
  [here, other] = [await device(), await device()];
  await signInThroughForm(other, world.current.url, world.current.member.email);
  await signInThroughForm(here, world.current.url, world.current.member.email);
}, 30_000);

describe('the Account page’s sessions', () => {
  it('lists where one is signed in, and signs the other device out: its next action asks to sign in', async () => {
    await here.goto(`${world.current.url}/dashboard/account`);
    await here.getByRole('heading', { level: 1, name: 'Account' }).waitFor();
    const table = here.getByRole('table', { name: 'Your sessions' });
    await table.waitFor();
    // A header row and the two sessions: this one marked, the other with its Sign out.
    await expect(table.getByRole('row').count()).resolves.toBe(3);
    const current = table.getByRole('row').filter({ hasText: 'This device' });
    await expect(current.count()).resolves.toBe(1);
    await expect(current.getByRole('button', { name: 'Sign out' }).count()).resolves.toBe(0);
    const signOut = table.getByRole('button', { name: 'Sign out' });
    await expect(signOut.count()).resolves.toBe(1);
    // Named by its row for a screen reader: the device and its address, a loopback one said as
    // the Security log's From says it (this test's browser is on the server's machine).
    expect(await description(signOut)).toMatch(/^Chrome on Linux, This machine \((::1|(::ffff:)?127\.0\.0\.1)\)/);
    const address = current.getByText(/^This machine \((::1|(::ffff:)?127\.0\.0\.1)\)$/);
    await expect(address.getAttribute('title')).resolves.toMatch(/^This machine or a proxy on it \(/);
    // Sign out everywhere is still there.
    await here.getByRole('button', { name: 'Sign out everywhere' }).waitFor();
    expect(await checkPage(here, 'account-sessions')).toEqual([]);

    // It asks first: Cancel ends nothing.
    await signOut.click();
    const confirm = here.getByRole('dialog', { name: 'Sign out this session' });
    await confirm.getByText(/its next request goes to sign in/).waitFor();
    await confirm.getByRole('button', { name: 'Cancel' }).click();
    await confirm.waitFor({ state: 'detached' });
    await expect(table.getByRole('row').count()).resolves.toBe(3);

    await signOut.click();
    await confirm.getByRole('button', { name: 'Sign out' }).click();
    await confirm.waitFor({ state: 'detached' });
    await here
      .getByRole('status')
      .filter({ hasText: /signed out: its next request goes to sign in\.$/ })
      .waitFor();
    await expect(table.getByRole('row').count()).resolves.toBe(2);
    await expect(table.getByRole('button', { name: 'Sign out' }).count()).resolves.toBe(0);

    // The other device, on its open page: its next action asks to sign in again.
    await other.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Customers' }).click();
    await other.getByRole('dialog', { name: 'Your session ended' }).waitFor();
    // This one goes on.
    await here.reload();
    await here.getByRole('table', { name: 'Your sessions' }).waitFor();
  }, 60_000);
});
