import { afterAll, beforeAll, describe, it } from '@jest/globals';
import type { BrowserContext, Page } from 'playwright-core';
import { hashPassword, seedDemo, type DemoSeedResult } from '@retention/domain';
import { testSecretsKeyBytes } from '@retention/testkit';
import { desktopPage, PASSWORD, signInThroughForm, useDashboardWorld } from './support/dashboard-world.js';

/**
 * The demo `npm start` seeds, as its owner reads the Settings pages in a real headless Chromium:
 * the Tokens page and the Security log name the maker of the demo's token alike, and the log
 * records the demo's endpoints as added.
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

  it('shows the demo endpoints as added by npm start, not only as edited', async () => {
    await open('/settings/security-log', 'Security log');
    const added = page.getByRole('table', { name: 'Security log' }).getByRole('row', { name: /webhook\.created/ });
    for (const name of ['Dunning emails', 'CRM']) {
      const row = added.filter({ hasText: `Name: ${name}` });
      await row.getByText('Endpoint added', { exact: true }).waitFor();
      await row.getByRole('cell', { name: 'npm start', exact: true }).waitFor();
    }
  });
});
