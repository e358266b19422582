import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { BrowserContext, Page, Route } from 'playwright-core';
import { hashPassword, loadFixtures } from '@retention/domain';
import { testSecretsKeyBytes } from '@retention/testkit';
import { desktopPage, PASSWORD, signInThroughForm, useDashboardWorld } from './support/dashboard-world.js';

/**
 * The Outbound webhooks list's banners for endpoints turned off after 10 failures, in a real
 * Chromium against the real API (docs/dashboard-ui.md, "Outbound webhooks"): Turn on and Dismiss
 * say what they did in the page's status, each in its own style (a Dismiss after a Turn on does
 * not keep the success style), and give the focus to the page's content as the banner goes; the
 * row's own switch turning one on clears its banner and any earlier word, a "stays off" about
 * that very endpoint too; two answers that come one after the other each change their own
 * endpoint. Controls are found by role and accessible name.
 */
const world = useDashboardWorld();
const OWNER = 'owner@banner.test';
const NAMES = ['Alpha CRM', 'Beta ERP', 'Gamma BI', 'Delta Mail', 'Epsilon Ads'] as const;
let context: BrowserContext;
let page: Page;
const ids: Record<string, string> = {};

beforeAll(async () => {
  const { db } = world.current;
  const loaded = await loadFixtures(db, testSecretsKeyBytes(), {
    workspaces: [
      {
        key: 'b',
        name: 'Banner Co',
        processor: 'connected',
        users: [{ key: 'owner', email: OWNER, role: 'owner' }],
        webhooks: NAMES.map((name, index) => ({
          key: `hook${index}`,
          name,
          url: `https://${name.split(' ')[0]!.toLowerCase()}.banner.example/hooks`,
        })),
      },
    ],
  });
  for (const [index, name] of NAMES.entries()) ids[name] = loaded.workspaces.b!.webhooks[`hook${index}`]!.id;
  // Turned off by the worker after 10 failures in a row, as deliveries.ts does it: each has its alert.
  await db('webhook_endpoints')
    .whereIn('id', Object.values(ids))
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
/** The page's live status with something in it (empty, it is there and hidden, to be announced when filled). */
const status = () => page.getByRole('status').filter({ hasText: /\S/ });
const focusedTag = () => page.evaluate<string | undefined>('document.activeElement?.tagName');
const enabledSwitch = (name: string) =>
  page.getByRole('row', { name: new RegExp(name) }).getByRole('switch', { name: 'Enabled' });
const stored = async (name: string) =>
  (await world.current.db('webhook_endpoints').where({ id: ids[name]! }).first<{ enabled: boolean }>('enabled'))
    .enabled;

describe('the turned-off banners on Outbound webhooks', () => {
  it('Turn on says what happens to what it missed, in the success style, and focuses the content', async () => {
    await banner('Beta ERP').getByRole('button', { name: 'Turn on' }).click();
    await banner('Beta ERP').waitFor({ state: 'detached' });
    await expect(status().textContent()).resolves.toBe(
      'Beta ERP was turned on: new events are sent to it. Those recorded while it was off are in its delivery log ' +
        'as skipped; Retry failed since… on its page sends them.',
    );
    await expect(status().getAttribute('class')).resolves.toBe('result ok');
    await expect(focusedTag()).resolves.toBe('MAIN');
    await expect(enabledSwitch('Beta ERP').getAttribute('aria-checked')).resolves.toBe('true');
    await expect(stored('Beta ERP')).resolves.toBe(true);
  });

  it('Dismiss after it says the endpoint stays off, in the plain style, not the success style left by Turn on', async () => {
    await banner('Alpha CRM').getByRole('button', { name: 'Dismiss' }).click();
    await banner('Alpha CRM').waitFor({ state: 'detached' });
    await expect(status().textContent()).resolves.toBe(
      'Notice dismissed: Alpha CRM stays off until someone turns it on.',
    );
    await expect(status().getAttribute('class')).resolves.toBe('notice page-notice');
    await expect(page.locator('.result.ok').count()).resolves.toBe(0);
    await expect(page.getByText(/Beta ERP was turned on/).count()).resolves.toBe(0);
    await expect(focusedTag()).resolves.toBe('MAIN');
    await expect(enabledSwitch('Alpha CRM').getAttribute('aria-checked')).resolves.toBe('false');
    await expect(stored('Alpha CRM')).resolves.toBe(false);
  });

  it('the row\'s switch turning on a dismissed endpoint takes back its "stays off"', async () => {
    await enabledSwitch('Alpha CRM').click();
    await status()
      .filter({ hasText: /^Alpha CRM was turned on/ })
      .waitFor();
    await expect(page.getByText(/stays off/).count()).resolves.toBe(0);
    await expect(status().getAttribute('class')).resolves.toBe('result ok');
    await expect(enabledSwitch('Alpha CRM').getAttribute('aria-checked')).resolves.toBe('true');
    // The switch is still there, and keeps the focus.
    await expect(page.evaluate<string | null>('document.activeElement?.getAttribute("role") ?? null')).resolves.toBe(
      'switch',
    );
  });

  it("the row's switch turning one on clears its banner, and the word before it gives way", async () => {
    await enabledSwitch('Gamma BI').click();
    await banner('Gamma BI').waitFor({ state: 'detached' });
    await expect(status().textContent()).resolves.toMatch(/^Gamma BI was turned on/);
    await expect(page.getByText(/Alpha CRM was turned on/).count()).resolves.toBe(0);
    await expect(stored('Gamma BI')).resolves.toBe(true);
  });

  it("a Dismiss answered after another banner's Turn on leaves that endpoint on and its banner gone", async () => {
    // Delta's Dismiss is made at once; its answer reaches the page only after Epsilon's Turn on has
    // been answered and shown, as on a slow network.
    let release = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    const dismissed = page.waitForRequest((request) =>
      request.url().endsWith(`/webhooks/${ids['Delta Mail']}/dismiss-alert`),
    );
    const holdAnswer = async (route: Route) => {
      const response = await route.fetch();
      await held;
      await route.fulfill({ response });
    };
    const pattern = `**/dashboard/api/webhooks/${ids['Delta Mail']}/dismiss-alert`;
    await page.route(pattern, holdAnswer);
    try {
      await banner('Delta Mail').getByRole('button', { name: 'Dismiss' }).click();
      await dismissed;
      await banner('Epsilon Ads').getByRole('button', { name: 'Turn on' }).click();
      await banner('Epsilon Ads').waitFor({ state: 'detached' });
      await status()
        .filter({ hasText: /^Epsilon Ads was turned on/ })
        .waitFor();
      release();
      await banner('Delta Mail').waitFor({ state: 'detached' });
      await status()
        .filter({ hasText: /^Notice dismissed: Delta Mail stays off/ })
        .waitFor();
    } finally {
      release();
      await page.unroute(pattern, holdAnswer);
    }
    // Epsilon stays on in the list, its banner does not come back.
    await expect(banner('Epsilon Ads').count()).resolves.toBe(0);
    await expect(enabledSwitch('Epsilon Ads').getAttribute('aria-checked')).resolves.toBe('true');
    await expect(enabledSwitch('Delta Mail').getAttribute('aria-checked')).resolves.toBe('false');
    await expect(stored('Epsilon Ads')).resolves.toBe(true);
    await expect(stored('Delta Mail')).resolves.toBe(false);
    await expect(page.getByRole('region', { name: /was turned off$/ }).count()).resolves.toBe(0);
  });
});
