import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { BrowserContext, Locator, Page } from 'playwright-core';
import { hashPassword, loadFixtures, recordCancelSession } from '@retention/domain';
import { testSecretsKeyBytes } from '@retention/testkit';
import { desktopPage, PASSWORD, signInThroughForm, useDashboardWorld } from './support/dashboard-world.js';

/**
 * A delivery whose attempt the receiver refused, on a campaign's and a cancel session's timeline
 * (docs/dashboard-ui.md, "Details"), in a real headless Chromium against the real API and worker,
 * sending to a port where nothing listens: it reads "Failed (connection refused)", as the delivery
 * log says it, with when its next attempt is due, where it read "pending", as if nothing had been
 * tried. A retry delay of ten minutes keeps it pending for the whole test.
 */
const world = useDashboardWorld({ webhookRetryDelays: '10m' });

const EMAIL = 'owner@oscorp.test';
let context: BrowserContext;
let page: Page;
let ids: { workspace: string; customer: string; endpoint: string };

/** A local port nothing listens on: the connection is refused. */
async function refusingPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

beforeAll(async () => {
  const { db } = world.current;
  const port = await refusingPort();
  const loaded = await loadFixtures(db, testSecretsKeyBytes(), {
    workspaces: [
      {
        key: 'oscorp',
        name: 'Oscorp',
        processor: 'connected',
        users: [{ key: 'owner', email: EMAIL, role: 'owner' }],
        customers: [{ key: 'c1', email: 'norman@oscorp-customers.test', subscriptions: [{ key: 's1' }] }],
        campaigns: [{ customer: 'c1', psp_invoice_id: 'in_refused', status: 'in_flight' as const }],
        webhooks: [{ key: 'hook', name: 'Closed CRM', url: `https://127.0.0.1:${port}/hooks/closed` }],
      },
    ],
  });
  const workspace = loaded.workspaces.oscorp!;
  ids = { workspace: workspace.id, customer: workspace.customers.c1!, endpoint: workspace.webhooks.hook!.id };
  await db('users')
    .where({ email: EMAIL })
    .update({ password_hash: await hashPassword(PASSWORD) });
  await world.current.startWorker();
  ({ context, page } = await desktopPage(world.current.browser));
  await signInThroughForm(page, world.current.url, EMAIL);
}, 60_000);

afterAll(async () => {
  await context?.close();
});

/** When the endpoint's delivery of an event type is next due, as the API writes it. */
async function nextAttemptAt(eventType: string): Promise<string> {
  const delivery = await world.current
    .db('webhook_deliveries')
    .where({ endpoint_id: ids.endpoint, event_type: eventType })
    .first<{ status: string; next_attempt_at: Date }>('status', 'next_attempt_at');
  expect(delivery.status).toBe('pending');
  return delivery.next_attempt_at.toISOString();
}

/** The delivery to Closed CRM under the timeline's event of this type, once its attempt was refused. */
async function refusedDelivery(eventType: string): Promise<Locator> {
  const event = page.getByRole('region', { name: 'Timeline' }).getByRole('listitem').filter({ hasText: eventType });
  const delivery = event.getByRole('listitem').filter({ hasText: 'Closed CRM' });
  await delivery
    .getByText(/^Sent to Closed CRM: Failed \(connection refused\), 1 attempt, next attempt due /)
    .waitFor({ timeout: 20_000 });
  await expect(delivery.getByRole('time').getAttribute('datetime')).resolves.toBe(await nextAttemptAt(eventType));
  await expect(delivery.getByText(/pending/i).count()).resolves.toBe(0);
  return delivery;
}

describe('a delivery whose receiver refused the connection', () => {
  it("reads failed, with the reason and the next attempt's time, on the campaign's timeline", async () => {
    await page.getByRole('link', { name: 'Campaigns' }).click();
    await page.getByRole('link', { name: 'in_refused' }).click();
    await page.getByRole('heading', { level: 1, name: 'Invoice in_refused' }).waitFor();
    await page.getByRole('button', { name: 'Mark lost' }).click();
    const dialog = page.getByRole('dialog', { name: 'Mark lost' });
    await dialog.getByRole('button', { name: 'Mark lost' }).click();
    await dialog.waitFor({ state: 'detached' });
    await refusedDelivery('recovery.lost');
  });

  it("reads the same on a cancel session's timeline", async () => {
    const session = await recordCancelSession(world.current.db, {
      workspace_id: ids.workspace,
      customer_id: ids.customer,
      outcome: 'saved_discount',
      reason_code: 'too_expensive',
      monthly_mrr_cents: 4_900,
      currency: 'usd',
    });
    await page.goto(`${world.current.url}/dashboard/cancel-sessions/${session.id}`);
    await page.getByRole('heading', { level: 1, name: 'Cancel session' }).waitFor();
    await refusedDelivery('cancel.saved');
  });
});
