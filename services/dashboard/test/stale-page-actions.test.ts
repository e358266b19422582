import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { BrowserContext, Page } from 'playwright-core';
import { hashPassword } from '@retention/domain';
import { desktopPage, PASSWORD, signInThroughForm, useDashboardWorld } from './support/dashboard-world.js';

/**
 * A campaign closed while another person's page still shows it in flight, in a real Chromium
 * against the real API (docs/dashboard-ui.md, "Campaign"): that page's Mark lost does nothing,
 * says so in words, with who closed it, and shows the campaign as it is now, where it said the
 * server's "Campaign … is already recovered". Controls are found by role and accessible name.
 */
const world = useDashboardWorld();
const tabs: Array<{ context: BrowserContext; page: Page }> = [];

beforeAll(async () => {
  const { db, workspace } = world.current;
  const passwordHash = await hashPassword(PASSWORD);
  await db('users').insert([
    {
      workspace_id: workspace.id,
      email: 'olga@acme.test',
      role: 'admin',
      name: 'Olga Admin',
      password_hash: passwordHash,
    },
    {
      workspace_id: workspace.id,
      email: 'adam@acme.test',
      role: 'admin',
      name: 'Adam Admin',
      password_hash: passwordHash,
    },
  ]);
  for (const email of ['olga@acme.test', 'adam@acme.test']) {
    const tab = await desktopPage(world.current.browser);
    await signInThroughForm(tab.page, world.current.url, email);
    tabs.push(tab);
  }
}, 60_000);

afterAll(async () => {
  await Promise.all(tabs.map((tab) => tab.context.close()));
});

async function openCampaign(page: Page, id: string) {
  await page.goto(`${world.current.url}/dashboard/campaigns/${id}`);
  await page.getByRole('heading', { level: 1, name: /^Invoice / }).waitFor();
}

describe('a campaign closed under a page that shows it in flight', () => {
  it('says Mark lost did nothing, who closed it, and shows it closed', async () => {
    const [olga, adam] = [tabs[0]!.page, tabs[1]!.page];
    const id = world.current.workspace.campaignIds[0]!;
    await openCampaign(olga, id);
    await openCampaign(adam, id);

    await adam.getByRole('button', { name: 'Mark recovered' }).click();
    await adam.getByRole('dialog', { name: 'Mark recovered' }).getByRole('button', { name: 'Mark recovered' }).click();
    await adam.getByRole('dialog').waitFor({ state: 'detached' });

    await olga.getByRole('button', { name: 'Mark lost' }).click();
    const dialog = olga.getByRole('dialog', { name: 'Mark lost' });
    await dialog.getByRole('button', { name: 'Mark lost' }).click();
    await dialog.waitFor({ state: 'detached' });
    const said = olga.getByRole('alert').filter({ hasText: /^Mark lost did nothing/ });
    await said.waitFor();
    await expect(said.textContent()).resolves.toMatch(
      /^Mark lost did nothing: this campaign was already recovered by Adam Admin \(adam@acme\.test\), [^()]+\. The page now shows it as it is\.$/,
    );
    await expect(said.locator('time').count()).resolves.toBe(1);
    // The page shows it as it is: recovered, and no more marks offered.
    await olga.getByRole('main').getByText('Recovered', { exact: true }).first().waitFor();
    await expect(olga.getByRole('button', { name: 'Mark lost' }).count()).resolves.toBe(0);
    await expect(olga.getByText(/is already recovered; a closed campaign cannot change/).count()).resolves.toBe(0);
    const stored = await world.current.db('recovery_campaigns').where({ id }).first('status');
    expect(stored).toEqual({ status: 'recovered' });
  });
});
