import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { BrowserContext, Page } from 'playwright-core';
import { hashPassword, loadFixtures } from '@retention/domain';
import { newId } from '@retention/core';
import { testSecretsKeyBytes } from '@retention/testkit';
import { desktopPage, PASSWORD, signInThroughForm, useDashboardWorld } from './support/dashboard-world.js';
import { checkPage } from './support/page-checks.js';

/**
 * View in Stripe (docs/dashboard-ui.md): a customer, subscription or invoice mirrored from Stripe
 * links to its page in Stripe's dashboard, in the Stripe connection's mode; records with ids of
 * their own (the operator CLI's, the demo's) and workspaces without a Stripe connection have no
 * such link. In a real Chromium against the real API; links found by role and name.
 */
const world = useDashboardWorld();

const OWNER = 'owner@hooli.test';
let context: BrowserContext;
let page: Page;
let workspaceId = '';
const ids = { stripeCampaign: '', ownIdCampaign: '', customer: '' };

beforeAll(async () => {
  const { db } = world.current;
  const loaded = await loadFixtures(db, testSecretsKeyBytes(), {
    workspaces: [
      {
        key: 'hooli',
        name: 'Hooli',
        users: [{ key: 'owner', email: OWNER, role: 'owner' }],
        customers: [
          {
            key: 'gavin',
            email: 'gavin@hooli-customers.test',
            psp_customer_id: 'cus_Q1w2E3r4T5y6U7',
            subscriptions: [{ key: 'plan', psp_subscription_id: 'sub_1PqRsTuVwXyZ' }],
          },
          {
            key: 'cli',
            email: 'jian@hooli-customers.test',
            psp_customer_id: 'CUST-0042',
            subscriptions: [{ key: 'own', psp_subscription_id: 'SUB-7' }],
          },
        ],
        campaigns: [
          { key: 'stripe', customer: 'gavin', psp_invoice_id: 'in_1AbCdEfGhIjKlM', status: 'in_flight' as const },
          { key: 'own', customer: 'cli', psp_invoice_id: 'INV-2041', status: 'in_flight' as const },
        ],
      },
    ],
  });
  const hooli = loaded.workspaces.hooli!;
  workspaceId = hooli.id;
  ids.stripeCampaign = hooli.campaigns.stripe!;
  ids.ownIdCampaign = hooli.campaigns.own!;
  ids.customer = hooli.customers.gavin!;
  await db('users')
    .where({ email: OWNER })
    .update({ password_hash: await hashPassword(PASSWORD) });
  ({ context, page } = await desktopPage(world.current.browser));
  await signInThroughForm(page, world.current.url, OWNER);
}, 60_000);

afterAll(async () => {
  await context?.close();
});

/** The workspace's Stripe connection in `mode`, as connecting a key of that mode leaves it; none for null. */
async function connectStripe(mode: 'test' | 'live' | null): Promise<void> {
  const { db } = world.current;
  await db('processor_connections').where({ workspace_id: workspaceId }).delete();
  if (mode === null) return;
  await db('processor_connections').insert({
    id: newId(),
    workspace_id: workspaceId,
    provider: 'stripe',
    status: 'connected',
    mode,
    webhook_secret_sealed: 'sealed',
    webhook_secret_last4: 'abcd',
  });
}

const stripeLink = (name: string) => page.getByRole('link', { name: new RegExp(`^View ${name} in Stripe`) });

async function openCampaign(id: string): Promise<void> {
  await page.goto(`${world.current.url}/dashboard/campaigns/${id}`);
  await page.getByRole('heading', { level: 1, name: /^Invoice / }).waitFor();
  await page.getByRole('heading', { level: 2, name: 'Subscription' }).waitFor();
}

describe('View in Stripe', () => {
  it('is not offered without a Stripe connection', async () => {
    await connectStripe(null);
    await openCampaign(ids.stripeCampaign);
    await expect(page.getByText('in_1AbCdEfGhIjKlM', { exact: true }).count()).resolves.toBeGreaterThan(0);
    await expect(page.getByRole('link', { name: /in Stripe/ }).count()).resolves.toBe(0);
  });

  it("links a campaign's invoice, customer and subscription to Stripe's test-mode pages, in a new tab", async () => {
    await connectStripe('test');
    await openCampaign(ids.stripeCampaign);
    const expected = {
      invoice: 'https://dashboard.stripe.com/test/invoices/in_1AbCdEfGhIjKlM',
      customer: 'https://dashboard.stripe.com/test/customers/cus_Q1w2E3r4T5y6U7',
      subscription: 'https://dashboard.stripe.com/test/subscriptions/sub_1PqRsTuVwXyZ',
    };
    for (const [record, href] of Object.entries(expected)) {
      const link = stripeLink(record);
      await expect(link.getAttribute('href')).resolves.toBe(href);
      await expect(link.getAttribute('target')).resolves.toBe('_blank');
      await expect(link.getAttribute('rel')).resolves.toBe('noopener noreferrer');
      await expect(link.textContent()).resolves.toBe(`View ${record} in Stripe (opens in a new tab)`);
    }
    // The links beside the ids keep the page accessible, and within a phone's width.
    await expect(checkPage(page, 'campaign-with-stripe-links')).resolves.toEqual([]);
  });

  it("links to live-mode pages for a live connection, from the customer's page too", async () => {
    await connectStripe('live');
    await page.goto(`${world.current.url}/dashboard/customers/${ids.customer}`);
    await page.getByRole('heading', { level: 1, name: 'gavin@hooli-customers.test' }).waitFor();
    await expect(stripeLink('customer').getAttribute('href')).resolves.toBe(
      'https://dashboard.stripe.com/customers/cus_Q1w2E3r4T5y6U7',
    );
  });

  it('is not offered for ids Stripe did not make (records brought in by the operator CLI)', async () => {
    await connectStripe('test');
    await openCampaign(ids.ownIdCampaign);
    await expect(page.getByText('INV-2041', { exact: true }).count()).resolves.toBeGreaterThan(0);
    await expect(page.getByRole('link', { name: /in Stripe/ }).count()).resolves.toBe(0);
  });
});
