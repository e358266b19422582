import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { BrowserContext, Page } from 'playwright-core';
import { hashPassword, loadFixtures } from '@retention/domain';
import { testSecretsKeyBytes } from '@retention/testkit';
import { desktopPage, PASSWORD, signInThroughForm, useDashboardWorld } from './support/dashboard-world.js';

/**
 * The Outbound webhooks list's banners for endpoints turned off after 10 failures, in a real
 * Chromium against the real API (docs/dashboard-ui.md, "Outbound webhooks"): Turn on and Dismiss
 * say what they did in the page's status, each in its own style, and give the focus to the page's
 * content as the banner goes; the row's own switch turning one on clears its banner and any
 * earlier word. Controls are found by role and accessible name.
 */
const world = useDashboardWorld();
const OWNER = 'owner@banner.test';
let context: BrowserContext;
let page: Page;

beforeAll(async () => {
  const { db } = world.current;
  const loaded = await loadFixtures(db, testSecretsKeyBytes(), {
    workspaces: [
      {
        key: 'b',
        name: 'Banner Co',
        processor: 'connected',
        users: [{ key: 'owner', email: OWNER, role: 'owner' }],
        webhooks: [
          { key: 'a', name: 'Alpha CRM', url: 'https://alpha.banner.example/hooks' },
          { key: 'b', name: 'Beta ERP', url: 'https://beta.banner.example/hooks' },
          { key: 'c', name: 'Gamma BI', url: 'https://gamma.banner.example/hooks' },
        ],
      },
    ],
  });
  const ids = Object.values(loaded.workspaces.b!.webhooks).map((hook) => hook.id);
  // Turned off by the worker after 10 failures in a row, as deliveries.ts does it: each has its alert.
  await db('webhook_endpoints')
    .whereIn('id', ids)
    .update({
      enabled: false,
      disabled_reason: 'consecutive_failures',
      disabled_at: db.raw("now() - interval '1 hour'"),
      failure_count: 10,
    });
  await db('users')
    .where({ email: OWNER })
    .update({ password_hash: await hashPassword(PASSWORD) });
  ({ context, page } = await desktopPage(world.current.browser));
  await signInThroughForm(page, world.current.url, OWNER);
  await page.goto(`${world.current.url}/dashboard/settings/webhooks`);
  await page.getByRole('table', { name: 'Webhook endpoints' }).waitFor();
}, 60_000);

afterAll(async () => {
  await context?.close();
});

const banner = (name: string) => page.getByRole('region', { name: `${name} was turned off` });
const status = () => page.getByRole('status').filter({ hasText: /\S/ });
const focusedTag = () => page.evaluate<string | undefined>('document.activeElement?.tagName');

describe('the turned-off banners on Outbound webhooks', () => {
  it('Dismiss says the endpoint stays off, not in the success style, and focuses the content', async () => {
    await banner('Alpha CRM').getByRole('button', { name: 'Dismiss' }).click();
    await banner('Alpha CRM').waitFor({ state: 'detached' });
    await expect(status().textContent()).resolves.toBe(
      'Notice dismissed: Alpha CRM stays off until someone turns it on.',
    );
    await expect(status().getAttribute('class')).resolves.toBe('notice');
    await expect(focusedTag()).resolves.toBe('MAIN');
    const row = page.getByRole('row', { name: /Alpha CRM/ });
    await expect(row.getByRole('switch', { name: 'Enabled' }).getAttribute('aria-checked')).resolves.toBe('false');
  });

  it('Turn on says what happens to what it missed, in the success style, and focuses the content', async () => {
    await banner('Beta ERP').getByRole('button', { name: 'Turn on' }).click();
    await banner('Beta ERP').waitFor({ state: 'detached' });
    await expect(status().textContent()).resolves.toMatch(/^Beta ERP was turned on: new events are sent to it\./);
    await expect(status().getAttribute('class')).resolves.toBe('result ok');
    await expect(focusedTag()).resolves.toBe('MAIN');
  });

  it("the row's own switch turning one on clears its banner, and the word before it gives way", async () => {
    await page
      .getByRole('row', { name: /Gamma BI/ })
      .getByRole('switch', { name: 'Enabled' })
      .click();
    await banner('Gamma BI').waitFor({ state: 'detached' });
    await expect(status().textContent()).resolves.toMatch(/^Gamma BI was turned on/);
    await expect(page.getByText(/Beta ERP was turned on/).count()).resolves.toBe(0);
    const stored = await world.current
      .db('webhook_endpoints')
      .whereIn('name', ['Alpha CRM', 'Beta ERP', 'Gamma BI'])
      .orderBy('name')
      .pluck('enabled');
    expect(stored).toEqual([false, true, true]);
  });
});
