import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { BrowserContext, Page } from 'playwright-core';
import { hashPassword, loadFixtures, recordCancelSession } from '@retention/domain';
import { testSecretsKeyBytes } from '@retention/testkit';
import { desktopPage, PASSWORD, signInThroughForm, useDashboardWorld } from './support/dashboard-world.js';
import { screenshot } from './support/page-checks.js';

/**
 * A campaign's timeline follows its events' deliveries by itself (docs/dashboard-ui.md,
 * "Campaign detail"), in a real headless Chromium against the real API, worker and an HTTPS
 * receiver: not only until the deliveries are made, but until a pending one is settled; each
 * delivery says when its next attempt is due, then when it was delivered. A cancel session's page
 * has the same timeline.
 */
const world = useDashboardWorld();

const EMAIL = 'owner@stark.test';
const HOOK_PATH = '/hooks/stark';
const BILLING_PATH = '/hooks/stark-billing';
/** The receiver holds every attempt until the test lets them through. */
let letThrough = false;
let context: BrowserContext;
let page: Page;
let ids: { workspace: string; customer: string };

/** When the delivery to an endpoint was completed, as the dashboard API writes times. */
async function completedAt(endpointName: string): Promise<string> {
  const row = await world.current
    .db('webhook_deliveries as d')
    .join('webhook_endpoints as w', 'w.id', 'd.endpoint_id')
    .where('w.name', endpointName)
    .whereNotNull('d.completed_at')
    .first<{ completed_at: Date }>('d.completed_at');
  return row.completed_at.toISOString();
}

beforeAll(async () => {
  const { db, receiver } = world.current;
  const loaded = await loadFixtures(db, testSecretsKeyBytes(), {
    workspaces: [
      {
        key: 'stark',
        name: 'Stark Industries',
        processor: 'connected',
        users: [{ key: 'owner', email: EMAIL, role: 'owner' }],
        customers: [{ key: 'c1', email: 'pepper@stark-customers.test', subscriptions: [{ key: 's1' }] }],
        campaigns: [{ customer: 'c1', psp_invoice_id: 'in_timeline', status: 'in_flight' as const }],
        webhooks: [
          { key: 'hook', name: 'Stark CRM', url: receiver.url(HOOK_PATH), events: ['recovery.lost'] },
          { key: 'billing', name: 'Stark Billing', url: receiver.url(BILLING_PATH), events: ['cancel.saved'] },
        ],
      },
    ],
  });
  receiver.route(HOOK_PATH, {
    secret: loaded.workspaces.stark!.webhooks.hook!.secret,
    // Hanging until the sender's timeout (3 s here) keeps the delivery pending for a while.
    behaviour: () => (letThrough ? { kind: 'status', status: 200, body: 'ok' } : { kind: 'hang' }),
  });
  receiver.route(BILLING_PATH, {
    secret: loaded.workspaces.stark!.webhooks.billing!.secret,
    behaviour: { kind: 'status', status: 200, body: 'ok' },
  });
  ids = { workspace: loaded.workspaces.stark!.id, customer: loaded.workspaces.stark!.customers.c1! };
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

describe('a campaign timeline', () => {
  it('turns a pending delivery into its outcome without a reload', async () => {
    await page.getByRole('link', { name: 'Campaigns' }).click();
    await page.getByRole('link', { name: 'in_timeline' }).click();
    await page.getByRole('heading', { level: 1, name: 'Invoice in_timeline' }).waitFor();
    await page.getByRole('button', { name: 'Mark lost' }).click();
    const dialog = page.getByRole('dialog', { name: 'Mark lost' });
    await dialog.getByRole('button', { name: 'Mark lost' }).click();
    await dialog.waitFor({ state: 'detached' });

    const lostEvent = page
      .getByRole('region', { name: 'Timeline' })
      .getByRole('listitem')
      .filter({ hasText: 'recovery.lost' });
    // The delivery is made, and its attempts do not get through yet: each times out, which it says
    // (it said "pending" alone, as if nothing had been tried), with when the next is due.
    const delivery = lostEvent.getByRole('listitem').filter({ hasText: 'Stark CRM' });
    await world.current.receiver.waitForRequests(HOOK_PATH, 1);
    await delivery
      .getByText(/Stark CRM: Failed \(timed out after 3000 ms\), \d+ attempts?, next attempt due/)
      .waitFor({ timeout: 20_000 });
    const due = await delivery.getByRole('time').getAttribute('datetime');
    expect(Number.isNaN(Date.parse(due!))).toBe(false);

    // The endpoint answers again: the next attempt succeeds, and the page says so by itself.
    letThrough = true;
    await lostEvent.getByText(/Stark CRM: Succeeded HTTP 200/).waitFor({ timeout: 20_000 });
    await expect(lostEvent.getByText(/pending/i).count()).resolves.toBe(0);
    // When it was delivered, with the page's own time (the UTC time on hover).
    await delivery.getByText(/, delivered /).waitFor();
    const time = delivery.getByRole('time');
    await expect(time.getAttribute('datetime')).resolves.toBe(await completedAt('Stark CRM'));
    await expect(time.getAttribute('title')).resolves.toMatch(/UTC/);
    await screenshot(page, 'campaign-timeline-1280');
    await page.setViewportSize({ width: 390, height: 844 });
    await screenshot(page, 'campaign-timeline-390');
    await page.setViewportSize({ width: 1280, height: 900 });
  });
});

describe("a cancel session's timeline", () => {
  it('shows its cancel.saved event and where it was delivered, when', async () => {
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
    const timeline = page.getByRole('region', { name: 'Timeline' });
    const saved = timeline.getByRole('listitem').filter({ hasText: 'cancel.saved' });
    // Being sent, then delivered: the page follows it by itself.
    await saved.getByText(/Stark Billing: Succeeded HTTP 200, 1 attempt, delivered /).waitFor({ timeout: 20_000 });
    const delivery = saved.getByRole('listitem').filter({ hasText: 'Stark Billing' });
    await expect(delivery.getByRole('time').getAttribute('datetime')).resolves.toBe(await completedAt('Stark Billing'));
    await expect(delivery.getByRole('link', { name: 'Stark Billing' }).count()).resolves.toBe(1);
    await expect(delivery.getByText(/then at/).count()).resolves.toBe(0);
    // The endpoint's URL edited since: the line says where this event went then.
    const { db } = world.current;
    const endpoint = await db('webhook_endpoints')
      .where({ name: 'Stark Billing' })
      .first<{ id: string; url: string }>();
    await db('webhook_endpoints')
      .where({ id: endpoint.id })
      .update({ url: `${endpoint.url}-moved` });
    try {
      await page.reload();
      await delivery.getByText(`(then at ${endpoint.url})`, { exact: true }).waitFor();
    } finally {
      await db('webhook_endpoints').where({ id: endpoint.id }).update({ url: endpoint.url });
    }
    await screenshot(page, 'cancel-session-1280');
    await page.setViewportSize({ width: 390, height: 844 });
    await screenshot(page, 'cancel-session-390');
    const overflow = await page.evaluate<number>('document.documentElement.scrollWidth - window.innerWidth');
    expect(overflow).toBeLessThanOrEqual(0);
    await page.setViewportSize({ width: 1280, height: 900 });
  });

  it('says a saved session without an event was imported, not that an event is missing', async () => {
    // As `fixtures load` imports it: the row alone, no event.
    const [session] = await world.current
      .db('cancel_sessions')
      .insert({
        workspace_id: ids.workspace,
        customer_id: ids.customer,
        outcome: 'saved_discount',
        reason_code: 'too_expensive',
        monthly_mrr_cents: 4_900,
        currency: 'usd',
      })
      .returning<Array<{ id: string }>>('id');
    await page.goto(`${world.current.url}/dashboard/cancel-sessions/${session!.id}`);
    const timeline = page.getByRole('region', { name: 'Timeline' });
    await timeline
      .getByText(
        'No event is on record for this session: it was imported with past data rather than recorded when it ended, so nothing about it was sent to your webhook endpoints.',
      )
      .waitFor();
    await expect(timeline.getByText(/No events have been recorded/).count()).resolves.toBe(0);
  });
});
