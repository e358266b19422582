import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { BrowserContext, Page } from 'playwright-core';
import { hashPassword, loadFixtures } from '@retention/domain';
import { testSecretsKeyBytes } from '@retention/testkit';
import { desktopPage, PASSWORD, signInThroughForm, useDashboardWorld } from './support/dashboard-world.js';
import { screenshot } from './support/page-checks.js';

/**
 * What a member (read-only role) sees in Settings, in a real headless Chromium against the real
 * API (docs/dashboard-ui.md, "Roles"): an endpoint's state as words where owners and admins have
 * the Enabled switch, and no API tokens tab (its address says why; the dashboard API answers 403).
 * Controls are found by role and accessible name only.
 */
const world = useDashboardWorld();

const OWNER = 'owner@wayne.test';
const ADMIN = 'admin@wayne.test';
const MEMBER = 'member@wayne.test';
let context: BrowserContext;
let page: Page;

beforeAll(async () => {
  const { db } = world.current;
  const loaded = await loadFixtures(db, testSecretsKeyBytes(), {
    workspaces: [
      {
        key: 'wayne',
        name: 'Wayne Enterprises',
        processor: 'connected',
        users: [
          { key: 'owner', email: OWNER, role: 'owner' },
          { key: 'admin', email: ADMIN, role: 'admin' },
          { key: 'member', email: MEMBER, role: 'member' },
        ],
        tokens: [{ key: 'reporting', name: 'Reporting' }],
        webhooks: [
          { key: 'on', name: 'Wayne CRM', url: 'https://crm.wayne.test/hook' },
          { key: 'off', name: 'Wayne ERP', url: 'https://erp.wayne.test/hook', enabled: false },
          { key: 'failing', name: 'Wayne Data', url: 'https://data.wayne.test/hook' },
        ],
      },
    ],
  });
  const hooks = loaded.workspaces.wayne!.webhooks;
  // Turned off by the worker after 10 failures in a row, as deliveries.ts does it.
  await db('webhook_endpoints')
    .where({ id: hooks.failing!.id })
    .update({ enabled: false, disabled_reason: 'consecutive_failures', failure_count: 10 });
  const passwordHash = await hashPassword(PASSWORD);
  await db('users').whereIn('email', [OWNER, ADMIN, MEMBER]).update({ password_hash: passwordHash });
  ({ context, page } = await desktopPage(world.current.browser));
  await signInThroughForm(page, world.current.url, MEMBER);
}, 60_000);

afterAll(async () => {
  await context?.close();
});

const settingsTabs = () => page.getByRole('navigation', { name: 'Settings' });

describe('a member', () => {
  it("reads each endpoint's state as words, with why an endpoint was turned off, and no switch", async () => {
    await page.getByRole('link', { name: 'Settings' }).click();
    await settingsTabs().getByRole('link', { name: 'Outbound webhooks' }).click();
    await page.getByRole('heading', { level: 1, name: 'Outbound webhooks' }).waitFor();
    await page.getByRole('row', { name: /Wayne CRM/ }).waitFor();
    await expect(page.getByRole('switch').count()).resolves.toBe(0);
    await page
      .getByRole('row', { name: /Wayne CRM/ })
      .getByText('Enabled', { exact: true })
      .waitFor();
    await page
      .getByRole('row', { name: /Wayne ERP/ })
      .getByText('Disabled', { exact: true })
      .waitFor();
    await page
      .getByRole('row', { name: /Wayne ERP/ })
      .getByText('Turned off by hand')
      .waitFor();
    const failing = page.getByRole('row', { name: /Wayne Data/ });
    await failing.getByText('Disabled', { exact: true }).waitFor();
    await failing.getByText('Turned off after 10 failed deliveries in a row').waitFor();
    await screenshot(page, 'member-webhooks-1280');
    await page.setViewportSize({ width: 390, height: 844 });
    await screenshot(page, 'member-webhooks-390');
    await page.setViewportSize({ width: 1280, height: 900 });

    await page.getByRole('link', { name: 'Wayne Data' }).click();
    await page.getByRole('heading', { level: 1, name: 'Wayne Data' }).waitFor();
    await page.getByRole('heading', { level: 2, name: 'Delivery log' }).waitFor();
    await expect(page.getByRole('switch').count()).resolves.toBe(0);
    const deliveries = page.getByRole('definition').filter({ hasText: 'Disabled' });
    await deliveries.getByText('Turned off after 10 failed deliveries in a row').waitFor();
    await screenshot(page, 'member-endpoint-1280');
    await page.setViewportSize({ width: 390, height: 844 });
    await screenshot(page, 'member-endpoint-390');
    const overflow = await page.evaluate<number>('document.documentElement.scrollWidth - window.innerWidth');
    expect(overflow).toBeLessThanOrEqual(0);
    await page.setViewportSize({ width: 1280, height: 900 });
  });

  it('has no API tokens tab; its address says who can see it; Settings opens on a tab the member has', async () => {
    await page.goto(`${world.current.url}/dashboard/settings`);
    await page.getByRole('heading', { level: 1, name: 'Outbound webhooks' }).waitFor();
    expect(new URL(page.url()).pathname).toBe('/dashboard/settings/webhooks');
    await expect(settingsTabs().getByRole('link', { name: 'API tokens' }).count()).resolves.toBe(0);

    await page.goto(`${world.current.url}/dashboard/settings/tokens`);
    const title = 'The API tokens list is not shown to members';
    await page.getByRole('heading', { level: 1, name: title }).waitFor();
    await page.getByText('Only owners and admins can see it.').waitFor();
    await expect(page.getByRole('table').count()).resolves.toBe(0);
    await expect(page.getByText('Reporting').count()).resolves.toBe(0);
    await screenshot(page, 'member-tokens-1280');
    await page.getByRole('link', { name: 'Back to Settings' }).click();
    await page.getByRole('heading', { level: 1, name: 'Outbound webhooks' }).waitFor();
  });

  it("the dashboard API refuses a member the token list (403, the JSON error) and answers an admin's", async () => {
    const cookieOf = async (ofContext: BrowserContext) =>
      (await ofContext.cookies()).map((each) => `${each.name}=${each.value}`).join('; ');
    const tokens = (cookie: string) =>
      fetch(`${world.current.url}/dashboard/api/tokens`, { headers: { cookie, origin: world.current.url } });

    const refused = await tokens(await cookieOf(context));
    expect(refused.status).toBe(403);
    const body = (await refused.json()) as { error: { type: string; message: string } };
    expect(body.error.type).toBe('forbidden');
    expect(JSON.stringify(body)).not.toContain('Reporting');
    const me = (await (
      await fetch(`${world.current.url}/dashboard/api/me`, { headers: { cookie: await cookieOf(context) } })
    ).json()) as { permissions: Record<string, unknown> };
    expect(me.permissions).toMatchObject({ read_tokens: false, manage_tokens: false });

    const admin = await desktopPage(world.current.browser);
    try {
      await signInThroughForm(admin.page, world.current.url, ADMIN);
      const answered = await tokens(await cookieOf(admin.context));
      expect(answered.status).toBe(200);
      const list = (await answered.json()) as { data: Array<{ name: string }> };
      expect(list.data.map((token) => token.name)).toEqual(['Reporting']);
      // The admin has the tab, and the switch.
      await admin.page.getByRole('link', { name: 'Settings' }).click();
      await admin.page.getByRole('heading', { level: 1, name: 'API tokens' }).waitFor();
      await admin.page.getByRole('row', { name: /Reporting/ }).waitFor();
      await admin.page
        .getByRole('navigation', { name: 'Settings' })
        .getByRole('link', { name: 'Outbound webhooks' })
        .click();
      await admin.page
        .getByRole('row', { name: /Wayne CRM/ })
        .getByRole('switch', { name: 'Enabled' })
        .waitFor();
    } finally {
      await admin.context.close();
    }
  });
});
