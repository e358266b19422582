import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { BrowserContext, Page } from 'playwright-core';
import { hashPassword, loseCampaign, openCampaign } from '@retention/domain';
import { runCli } from '@retention/testkit';
import { desktopPage, PASSWORD, signInThroughForm, useDashboardWorld } from './support/dashboard-world.js';

/**
 * A campaign closed while a person's page still shows it in flight, in a real Chromium against
 * the real API (docs/dashboard-ui.md, "Campaign"): closed by another person through the dashboard
 * API, by the operator CLI run for someone, by the payment processor (the CLI's `--processor`)
 * and by the stale-campaign sweep (`campaign close-stale`), never by changing the stale page. That
 * page's Mark lost or Mark recovered then does nothing and says so in words, with who closed it
 * (as the Security log and the timeline name them) and when, and shows the campaign as it is now,
 * where it said the server's "Campaign … is already recovered". Controls are found by role and
 * accessible name.
 */
const world = useDashboardWorld();
const tabs: Array<{ context: BrowserContext; page: Page }> = [];
const users: Record<string, string> = {};
/** Campaigns opened for these tests, in flight, by name. */
const campaigns: Record<string, string> = {};

beforeAll(async () => {
  const { db, workspace } = world.current;
  const passwordHash = await hashPassword(PASSWORD);
  const inserted = await db('users')
    .insert([
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
    ])
    .returning<Array<{ id: string; email: string }>>(['id', 'email']);
  for (const user of inserted) users[user.email] = user.id;
  // More campaigns of the world's customer, opened as the CLI's `campaign open` does; silent (no
  // recovery.opened on its way), so that the page does not read them again on its own meanwhile.
  const first = await db('recovery_campaigns')
    .where({ id: workspace.campaignIds[0]! })
    .first<{ customer_id: string; subscription_id: string; amount_cents: number; currency: string }>(
      'customer_id',
      'subscription_id',
      'amount_cents',
      'currency',
    );
  const opened = {
    operator: { invoice: 'in_closed_by_cli' },
    // Closed as the operator CLI closed campaigns before it logged them: the campaign's
    // closed_by_user_id alone names the person.
    unlogged: { invoice: 'in_closed_by_cli_unlogged' },
    processor: { invoice: 'in_closed_by_processor' },
    // Open for 3,000 days: the only campaign `campaign close-stale --older-than-days 2999` closes.
    sweep: { invoice: 'in_closed_by_sweep', failed_at: new Date(Date.now() - 3000 * 86_400_000) },
    // Marked on a page that is up to date.
    lostHere: { invoice: 'in_marked_lost_here' },
    recoveredHere: { invoice: 'in_marked_recovered_here' },
  };
  for (const [name, { invoice, ...rest }] of Object.entries(opened)) {
    const campaign = await openCampaign(db, {
      workspace_id: workspace.id,
      customer_id: first.customer_id,
      subscription_id: first.subscription_id,
      psp_invoice_id: invoice,
      amount_cents: first.amount_cents,
      currency: first.currency,
      decline_code: 'insufficient_funds',
      silent: true,
      ...rest,
    });
    campaigns[name] = campaign.id;
  }
  for (const email of ['olga@acme.test', 'adam@acme.test']) {
    const tab = await desktopPage(world.current.browser);
    await signInThroughForm(tab.page, world.current.url, email);
    tabs.push(tab);
  }
}, 60_000);

afterAll(async () => {
  await Promise.all(tabs.map((tab) => tab.context.close()));
});

async function openCampaignPage(page: Page, id: string) {
  await page.goto(`${world.current.url}/dashboard/campaigns/${id}`);
  await page.getByRole('heading', { level: 1, name: /^Invoice / }).waitFor();
  await page.getByRole('button', { name: 'Mark lost' }).waitFor();
}

/** The operator CLI as a child process, on this world's database. */
async function cli(...args: string[]) {
  const result = await runCli(args, { DATABASE_URL: world.current.config.databaseUrl });
  expect(result.error).toBeUndefined();
  expect(result.code).toBe(0);
  return result.json as unknown;
}

/**
 * Confirms `label` on the stale page; the page says, in an alert, that it did nothing and why
 * (matched against `said`), shows `status` and offers no mark any more. Returns the alert's text.
 */
async function markOnStalePage(page: Page, label: 'Mark lost' | 'Mark recovered', said: RegExp, status: string) {
  await page.getByRole('button', { name: label }).click();
  const dialog = page.getByRole('dialog', { name: label });
  await dialog.getByRole('button', { name: label }).click();
  await dialog.waitFor({ state: 'detached' });
  const alert = page.getByRole('alert').filter({ hasText: new RegExp(`^${label} did nothing`) });
  await alert.waitFor();
  // The names come with the team's list: waited for, not read at once.
  await alert.filter({ hasText: said }).waitFor();
  await expect(alert.textContent()).resolves.toMatch(said);
  await expect(alert.locator('time').count()).resolves.toBe(1);
  // The page shows it as it is: its status, and no more marks offered.
  // The Status fact (its badge); the "Recovered" fact's value is a time.
  const facts = page.getByRole('region', { name: 'Campaign' });
  await facts
    .getByRole('definition')
    .filter({ hasText: new RegExp(`^${status}$`) })
    .waitFor();
  await expect(page.getByRole('button', { name: /^Mark (lost|recovered)$/ }).count()).resolves.toBe(0);
  await expect(page.getByText(/a closed campaign cannot change/).count()).resolves.toBe(0);
  // The mark was not made: the status line does not say it was.
  await expect(
    page
      .getByRole('status')
      .filter({ hasText: /^Marked / })
      .count(),
  ).resolves.toBe(0);
  return facts;
}

const storedStatus = async (id: string) =>
  (await world.current.db('recovery_campaigns').where({ id }).first<{ status: string }>('status')).status;

describe('a campaign marked on a page that is up to date', () => {
  it("Mark lost and Mark recovered say what they did in the status line; the focus is on the page's content", async () => {
    const olga = tabs[0]!.page;
    const marks = [
      { name: 'lostHere', label: 'Mark lost', said: 'Marked lost.', stored: 'lost' },
      { name: 'recoveredHere', label: 'Mark recovered', said: 'Marked recovered.', stored: 'recovered' },
    ] as const;
    for (const { name, label, said, stored } of marks) {
      const id = campaigns[name]!;
      await openCampaignPage(olga, id);
      await olga.getByRole('button', { name: label }).click();
      const dialog = olga.getByRole('dialog', { name: label });
      await dialog.getByRole('button', { name: label }).click();
      await dialog.waitFor({ state: 'detached' });
      await olga.getByRole('status').filter({ hasText: said }).waitFor();
      await expect(olga.getByRole('button', { name: /^Mark (lost|recovered)$/ }).count()).resolves.toBe(0);
      await expect(olga.evaluate<string>('document.activeElement?.tagName ?? ""')).resolves.toBe('MAIN');
      await expect(storedStatus(id)).resolves.toBe(stored);
    }
  });
});

describe('a campaign closed under a page that shows it in flight', () => {
  it('by another person on the dashboard: Mark lost says it did nothing, who marked it, when, and shows it recovered', async () => {
    const [olga, adam] = [tabs[0]!.page, tabs[1]!.page];
    const id = world.current.workspace.campaignIds[0]!;
    await openCampaignPage(olga, id);
    // Adam marks it recovered through the dashboard API, with his session, as his page would.
    const marked = await adam.request.post(`${world.current.url}/dashboard/api/campaigns/${id}/mark-recovered`, {
      headers: { origin: world.current.url },
    });
    expect(marked.status()).toBe(200);

    const facts = await markOnStalePage(
      olga,
      'Mark lost',
      /^Mark lost did nothing: Adam Admin \(adam@acme\.test\) had already closed this campaign as recovered, [^()]+\. The page now shows it as it is\.$/,
      'Recovered',
    );
    await facts.getByRole('definition').filter({ hasText: 'Adam Admin' }).waitFor();
    await expect(storedStatus(id)).resolves.toBe('recovered');
  });

  it('by the operator CLI run for someone: Mark recovered names them "via operator CLI", as the Security log does', async () => {
    const adam = tabs[1]!.page;
    const id = campaigns.operator!;
    await openCampaignPage(adam, id);
    await cli('campaign', 'lose', '--id', id, '--actor', users['olga@acme.test']!);

    const facts = await markOnStalePage(
      adam,
      'Mark recovered',
      /^Mark recovered did nothing: Olga Admin via operator CLI had already closed this campaign as lost, [^()]+\. The page now shows it as it is\.$/,
      'Lost',
    );
    await expect(facts.getByRole('definition').allTextContents()).resolves.toContain('Olga Admin via operator CLI');
    await expect(storedStatus(id)).resolves.toBe('lost');
    // The CLI's close is on record (operator-cli.md, "Campaign notes"): the timeline names it as the Security log does.
    await adam
      .getByRole('listitem')
      .filter({ hasText: /Marked lost by Olga Admin via operator CLI$/ })
      .waitFor();
  });

  it("by the operator CLI before it logged its closes: the campaign's closed_by_user_id still names the person", async () => {
    const adam = tabs[1]!.page;
    const id = campaigns.unlogged!;
    await loseCampaign(world.current.db, { id, by: 'operator', actor_id: users['olga@acme.test']! });
    await adam.goto(`${world.current.url}/dashboard/campaigns/${id}`);
    const facts = adam.getByRole('region', { name: 'Campaign' });
    await facts
      .getByRole('definition')
      .filter({ hasText: /^Lost$/ })
      .waitFor();
    await facts.getByRole('definition').filter({ hasText: 'Olga Admin via operator CLI' }).waitFor();
    await expect(
      adam
        .getByRole('listitem')
        .filter({ hasText: /^.*Marked lost by/ })
        .count(),
    ).resolves.toBe(0);
  });

  it('by the payment processor giving up: Mark recovered says the processor closed it', async () => {
    const olga = tabs[0]!.page;
    const id = campaigns.processor!;
    await openCampaignPage(olga, id);
    await cli('campaign', 'lose', '--id', id, '--processor');

    const facts = await markOnStalePage(
      olga,
      'Mark recovered',
      /^Mark recovered did nothing: the payment processor had already closed this campaign as lost, [^()]+\. The page now shows it as it is\.$/,
      'Lost',
    );
    await expect(facts.getByRole('definition').allTextContents()).resolves.toContain('The payment processor');
    await expect(storedStatus(id)).resolves.toBe('lost');
  });

  it('by the stale-campaign sweep: Mark lost says the sweep abandoned it', async () => {
    const adam = tabs[1]!.page;
    const id = campaigns.sweep!;
    await openCampaignPage(adam, id);
    await expect(
      cli('campaign', 'close-stale', '--workspace', world.current.workspace.id, '--older-than-days', '2999'),
    ).resolves.toEqual({ closed: [id] });

    const facts = await markOnStalePage(
      adam,
      'Mark lost',
      /^Mark lost did nothing: the stale-campaign sweep had already closed this campaign as abandoned, [^()]+\. The page now shows it as it is\.$/,
      'Abandoned',
    );
    await expect(facts.getByRole('definition').allTextContents()).resolves.toContain('The stale-campaign sweep');
    await expect(storedStatus(id)).resolves.toBe('abandoned');
  });
});
