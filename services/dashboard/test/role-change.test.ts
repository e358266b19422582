import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { BrowserContext, Page } from 'playwright-core';
import { hashPassword, loadFixtures } from '@retention/domain';
import { testSecretsKeyBytes } from '@retention/testkit';
import { desktopPage, PASSWORD, signInThroughForm, useDashboardWorld } from './support/dashboard-world.js';
import { checkPage } from './support/page-checks.js';

/**
 * A role changed while the person's tab is open, in two browser contexts (two people, two
 * devices) of a real headless Chromium against the real API (docs/dashboard-ui.md, "A role
 * changed under the page"): the owner changes Sam's role through the Team page; Sam's tab,
 * never reloaded, reads the role again when it is returned to (the window focused, the tab
 * shown again) and after a refusal, shows the tabs and controls of the new role, and says why.
 * Controls are found by role and accessible name.
 */
const world = useDashboardWorld();

const OWNER = 'owner@gotham.test';
const SAM = 'sam@gotham.test';
let owner: { context: BrowserContext; page: Page };
let sam: { context: BrowserContext; page: Page };
let endpointId = '';

beforeAll(async () => {
  const { db } = world.current;
  const loaded = await loadFixtures(db, testSecretsKeyBytes(), {
    workspaces: [
      {
        key: 'gotham',
        name: 'Gotham Gazette',
        processor: 'connected',
        users: [
          { key: 'owner', email: OWNER, role: 'owner', name: 'Olive Owner' },
          { key: 'sam', email: SAM, role: 'member', name: 'Sam Support' },
        ],
        tokens: [{ key: 'reporting', name: 'Reporting' }],
        webhooks: [{ key: 'crm', name: 'Gotham CRM', url: 'https://crm.gotham.test/hook' }],
      },
    ],
  });
  endpointId = loaded.workspaces.gotham!.webhooks.crm!.id;
  await db('users')
    .whereIn('email', [OWNER, SAM])
    .update({ password_hash: await hashPassword(PASSWORD) });
  owner = await desktopPage(world.current.browser);
  sam = await desktopPage(world.current.browser);
  await signInThroughForm(owner.page, world.current.url, OWNER);
  await signInThroughForm(sam.page, world.current.url, SAM);
  await owner.page.goto(`${world.current.url}/dashboard/settings/team`);
  await owner.page.getByRole('heading', { level: 1, name: 'Team' }).waitFor();
}, 60_000);

afterAll(async () => {
  await Promise.all([owner?.context.close(), sam?.context.close()]);
});

const settingsTabs = (page: Page) => page.getByRole('navigation', { name: 'Settings' }).getByRole('link');

/** The owner changes Sam's role on the Team page, through its confirmation. */
async function ownerMakesSam(role: 'admin' | 'member', said: string) {
  const { page } = owner;
  await page.getByRole('combobox', { name: `Role of ${SAM}` }).selectOption(role);
  const confirm = page.getByRole('dialog', { name: 'Change role' });
  await confirm.getByRole('button', { name: 'Change role' }).click();
  await confirm.waitFor({ state: 'detached' });
  await page.getByRole('status').filter({ hasText: said }).waitFor();
}

/**
 * Sam's tab is returned to, as the browser says it when the tab is shown again and its window
 * focused: the events the page listens to, on a page that has stayed loaded all along.
 */
async function returnTo(page: Page) {
  // A string: the tests compile without the DOM's types.
  await page.evaluate(
    "document.dispatchEvent(new Event('visibilitychange')); window.dispatchEvent(new Event('focus'));",
  );
}

/** Marks the page's window, to tell later that it was never reloaded (a reload forgets it). */
const markWindow = (page: Page) => page.evaluate("window.kept = 'yes'");
const stillMarked = (page: Page) => page.evaluate<string>("window.kept ?? 'reloaded'");

describe('a role changed while the person’s tab is open', () => {
  it('promoted to admin: the tab shows the admin’s Settings tabs once returned to, without a reload, and says why', async () => {
    const { page } = sam;
    await page.goto(`${world.current.url}/dashboard/settings/webhooks`);
    await page.getByRole('heading', { level: 1, name: 'Outbound webhooks' }).waitFor();
    await expect(settingsTabs(page).allTextContents()).resolves.toEqual(['Outbound webhooks', 'Team', 'Workspace']);
    await expect(page.getByRole('button', { name: 'Add endpoint' }).count()).resolves.toBe(0);
    await markWindow(page);

    await ownerMakesSam('admin', 'Saved: Sam Support is now an admin.');
    await returnTo(page);

    const note = page.getByRole('status').filter({ hasText: /^Your role in this workspace changed/ });
    await note.waitFor();
    await expect(note.textContent()).resolves.toContain(
      'Your role in this workspace changed from Member to Admin, so this page now shows what an admin can do.',
    );
    await page.getByRole('button', { name: 'Add endpoint' }).waitFor();
    await expect(settingsTabs(page).allTextContents()).resolves.toEqual([
      'API tokens',
      'Outbound webhooks',
      'Team',
      'Workspace',
      'Security log',
    ]);
    await expect(stillMarked(page)).resolves.toBe('yes');
    // The note passes the checks every page does (axe, a 390 px phone).
    expect(await checkPage(page, 'role-changed-note')).toEqual([]);
    // The new tabs work: the tokens list, with the admin's Create token.
    await settingsTabs(page).filter({ hasText: 'API tokens' }).click();
    await page.getByRole('heading', { level: 1, name: 'API tokens' }).waitFor();
    await page.getByRole('button', { name: 'Create token' }).waitFor();
    // Dismissed, the note goes.
    await page.getByRole('button', { name: 'Dismiss the role change note' }).click();
    await expect(note.count()).resolves.toBe(0);
  });

  it('demoted to member while a control of the admin’s is open: its click says it was not done and why, and the controls go', async () => {
    const { page } = sam;
    await page.goto(`${world.current.url}/dashboard/settings/webhooks/${endpointId}`);
    await page.getByRole('heading', { level: 1, name: 'Gotham CRM' }).waitFor();
    const sendTest = page.getByRole('button', { name: 'Send test' });
    await sendTest.waitFor();
    await markWindow(page);

    await ownerMakesSam('member', 'Saved: Sam Support is now a member.');
    // Not returned to: the page still offers Send test, which the server now refuses.
    await sendTest.click();
    const alert = page.getByRole('alert').filter({ hasText: /^That was not done: your role/ });
    await alert.waitFor();
    await expect(alert.textContent()).resolves.toContain(
      'That was not done: your role in this workspace changed from Admin to Member, so this page now shows what a member can do.',
    );
    // The server's own words say what was refused, once.
    await expect(page.getByText('Only owners and admins can').count()).resolves.toBe(1);
    // The page is whole, its admin controls gone.
    await page.getByRole('heading', { level: 1, name: 'Gotham CRM' }).waitFor();
    await expect(sendTest.count()).resolves.toBe(0);
    for (const name of ['Roll secret', 'Delete', 'Edit']) {
      await expect(page.getByRole('button', { name, exact: true }).count()).resolves.toBe(0);
    }
    await expect(settingsTabs(page).allTextContents()).resolves.toEqual(['Outbound webhooks', 'Team', 'Workspace']);
    await expect(stillMarked(page)).resolves.toBe('yes');
  });

  it('demoted while on the API tokens page: returned to, the page says the list is not for members, its tab gone', async () => {
    await ownerMakesSam('admin', 'Saved: Sam Support is now an admin.');
    const { page } = sam;
    await page.goto(`${world.current.url}/dashboard/settings/tokens`);
    await page.getByRole('button', { name: 'Create token' }).waitFor();
    await markWindow(page);

    await ownerMakesSam('member', 'Saved: Sam Support is now a member.');
    await returnTo(page);

    await page.getByRole('heading', { level: 1, name: 'The API tokens list is not shown to members' }).waitFor();
    await page
      .getByRole('status')
      .filter({ hasText: 'Your role in this workspace changed from Admin to Member' })
      .waitFor();
    await expect(page.getByRole('button', { name: 'Create token' }).count()).resolves.toBe(0);
    await expect(page.getByRole('button', { name: 'Revoke' }).count()).resolves.toBe(0);
    await expect(settingsTabs(page).allTextContents()).resolves.toEqual(['Outbound webhooks', 'Team', 'Workspace']);
    await expect(stillMarked(page)).resolves.toBe('yes');
  });

  it('returned to with the role unchanged: nothing is said, and GET /me is read once for the focus and visibility of one return', async () => {
    const { page } = sam;
    await page.goto(`${world.current.url}/dashboard/settings/webhooks`);
    await page.getByRole('heading', { level: 1, name: 'Outbound webhooks' }).waitFor();
    const reads: string[] = [];
    const count = (request: { url(): string }) => {
      if (new URL(request.url()).pathname === '/dashboard/api/me') reads.push(request.url());
    };
    page.on('request', count);
    const answered = page.waitForResponse((response) => new URL(response.url()).pathname === '/dashboard/api/me');
    await returnTo(page);
    await answered;
    // Time for a second read, were one asked.
    await page.waitForTimeout(500);
    page.off('request', count);
    expect(reads).toHaveLength(1);
    await expect(page.getByText(/Your role in this workspace changed/).count()).resolves.toBe(0);
  });
});
