import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { BrowserContext, Page } from 'playwright-core';
import { hashPassword, recordSecurityEvent, seedDemo, type DemoSeedResult } from '@retention/domain';
import { testSecretsKeyBytes } from '@retention/testkit';
import { desktopPage, PASSWORD, signInThroughForm, useDashboardWorld } from './support/dashboard-world.js';

/**
 * The demo `npm start` seeds, as its owner reads the Settings pages in a real headless Chromium:
 * the Tokens page and the Security log name the maker of the demo's token alike, and the log
 * records the demo's endpoints as added, each named by its name and URL.
 */
const world = useDashboardWorld();
let demo: DemoSeedResult;
let context: BrowserContext;
let page: Page;

beforeAll(async () => {
  const { db } = world.current;
  demo = await seedDemo(db, {
    secretsKey: testSecretsKeyBytes(),
    customers: 10,
    baseUrl: world.current.url,
    actor: { type: 'system', label: 'npm start' },
  });
  await db('users')
    .where({ id: demo.owner.id })
    .update({ password_hash: await hashPassword(PASSWORD) });
  ({ context, page } = await desktopPage(world.current.browser));
  await signInThroughForm(page, world.current.url, demo.owner.email);
}, 60_000);

afterAll(async () => {
  await context?.close();
});

async function open(route: string, title: string): Promise<void> {
  await page.goto(`${world.current.url}/dashboard${route}`);
  await page.getByRole('heading', { level: 1, name: title }).waitFor();
  await page.getByRole('status').filter({ hasText: 'Loading' }).waitFor({ state: 'detached' });
}

describe("npm start's demo in the Settings pages", () => {
  it("names the demo token's maker npm start on the Tokens page and in the Security log", async () => {
    await open('/settings/tokens', 'API tokens');
    await page
      .getByRole('table', { name: 'API tokens' })
      .getByRole('row', { name: /demo seed/ })
      .getByRole('cell', { name: 'npm start', exact: true })
      .waitFor();

    await open('/settings/security-log', 'Security log');
    const log = page.getByRole('table', { name: 'Security log' });
    const created = log.getByRole('row', { name: /token\.created/ });
    await created.getByText('API token created', { exact: true }).waitFor();
    await created.getByRole('cell', { name: 'npm start', exact: true }).waitFor();
    await created.getByText('API token: demo seed', { exact: true }).waitFor();
  });

  it('shows the demo endpoints as added by npm start, each by its name and URL', async () => {
    await open('/settings/security-log', 'Security log');
    const added = page.getByRole('table', { name: 'Security log' }).getByRole('row', { name: /webhook\.created/ });
    await expect(added.count()).resolves.toBe(2);
    for (const [name, url] of [
      ['Dunning emails', 'https://mail.northwind.example/hooks/retention'],
      ['CRM', 'https://crm.northwind.example/webhooks/retention'],
    ]) {
      const row = added.filter({ hasText: `Endpoint: ${name} (${url})` });
      await row.getByText('Endpoint added', { exact: true }).waitFor();
      await row.getByRole('cell', { name: 'npm start', exact: true }).waitFor();
      // Named once, by the target: not again as "Name: …" under it.
      await expect(row.getByText(/Name: /).count()).resolves.toBe(0);
    }
  });

  it('reads entries recorded before as they were: an endpoint by its URL, a retry that found none in words', async () => {
    await recordSecurityEvent(world.current.db, {
      workspace_id: demo.workspace.id,
      action: 'webhook.deliveries_requeued',
      actor: { type: 'user', user_id: demo.owner.id, label: demo.owner.email },
      target: { type: 'webhook_endpoint', id: randomUUID(), label: 'https://old.example/hook' },
      details: { since: '2026-11-20T10:00:00.000Z', requeued: 0 },
    });
    await open('/settings/security-log', 'Security log');
    const row = page
      .getByRole('table', { name: 'Security log' })
      .getByRole('row', { name: /webhook\.deliveries_requeued/ });
    await row.getByText('Endpoint: https://old.example/hook', { exact: true }).waitFor();
    await row.getByText(/^No failed deliveries to send again \(none failed or was skipped since Nov 20/).waitFor();
    await expect(row.getByText(/0 deliveries sent again/).count()).resolves.toBe(0);
  });
});
