import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { BrowserContext, Page } from 'playwright-core';
import { hashPassword, loadFixtures, recoverCampaign } from '@retention/domain';
import { eventually, testSecretsKeyBytes } from '@retention/testkit';
import { desktopPage, PASSWORD, signInThroughForm, useDashboardWorld } from './support/dashboard-world.js';

/**
 * An endpoint's delivery log, in a real headless Chromium against the real API, worker and an
 * HTTPS receiver.
 *
 * An endpoint turned off and on again (docs/webhooks.md, "While an endpoint is off"): an event
 * recorded while it is off is in its log and the campaign's timeline as skipped, with its reason
 * and no next attempt; a failed attempt whose retry the turning off skipped no longer promises
 * one; turning it on says what became of what it missed, and Retry failed since… (from when it
 * was off) sends it.
 *
 * An endpoint whose URL was edited (docs/decisions.md, "Outbound webhooks"): a Send test to the
 * old URL, the URL edited in the form, a Send test to the new one; only the old attempt says
 * "Sent to".
 */
const world = useDashboardWorld();

const EMAIL = 'owner@wayne.test';
const HOOK_PATH = '/hooks/wayne';
const OLD_PATH = '/hooks/old';
const NEW_PATH = '/hooks/new';
let context: BrowserContext;
let page: Page;
let endpointId = '';
let editedEndpointId = '';
let workspaceId = '';
let campaignId = '';

beforeAll(async () => {
  const { db, receiver } = world.current;
  const loaded = await loadFixtures(db, testSecretsKeyBytes(), {
    workspaces: [
      {
        key: 'wayne',
        name: 'Wayne Enterprises',
        processor: 'connected',
        users: [{ key: 'owner', email: EMAIL, role: 'owner' }],
        customers: [{ key: 'c1', email: 'lucius@wayne-customers.test', subscriptions: [{ key: 's1' }] }],
        campaigns: [{ key: 'k1', customer: 'c1', psp_invoice_id: 'in_while_off', status: 'in_flight' as const }],
        // The edited one takes an event type nothing here records: its log holds its Send tests alone.
        webhooks: [
          { key: 'hook', name: 'Moved CRM', url: receiver.url(HOOK_PATH) },
          { key: 'edited', name: 'Edited CRM', url: receiver.url(OLD_PATH), events: ['trial.reminder_sent'] },
        ],
      },
    ],
  });
  const ids = loaded.workspaces.wayne!;
  workspaceId = ids.id;
  endpointId = ids.webhooks.hook!.id;
  campaignId = ids.campaigns.k1!;
  receiver.route(HOOK_PATH, {
    secret: ids.webhooks.hook!.secret,
    behaviour: { kind: 'status', status: 200, body: 'ok' },
  });
  editedEndpointId = ids.webhooks.edited!.id;
  for (const path of [OLD_PATH, NEW_PATH]) {
    receiver.route(path, { secret: ids.webhooks.edited!.secret, behaviour: { kind: 'status', status: 200 } });
  }
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

/** A failed attempt (10 minutes ago) whose retry is due in 5 minutes, as the worker records one. */
async function failedWithRetryScheduled(): Promise<void> {
  const { db } = world.current;
  // Out of the outbox in its own transaction: the running worker's dispatcher never sees it.
  const event = await db.transaction(async (trx) => {
    const [row] = await trx('events')
      .insert({
        workspace_id: workspaceId,
        type: 'recovery.opened',
        data: { hello: 'world' },
        created_at: new Date(Date.now() - 600_000),
      })
      .returning(['id', 'seq']);
    await trx('event_outbox').where({ event_id: row.id }).delete();
    return row as { id: string; seq: string };
  });
  const retryAt = new Date(Date.now() + 300_000);
  const [delivery] = await db('webhook_deliveries')
    .insert({
      workspace_id: workspaceId,
      endpoint_id: endpointId,
      event_id: event.id,
      event_seq: event.seq,
      event_type: 'recovery.opened',
      status: 'pending',
      attempt_count: 1,
      next_attempt_at: retryAt,
      created_at: new Date(Date.now() - 600_000),
    })
    .returning('id');
  await db('webhook_attempts').insert({
    delivery_id: delivery.id,
    endpoint_id: endpointId,
    event_type: 'recovery.opened',
    attempt: 1,
    outcome: 'failed',
    http_status: 503,
    error: 'HTTP 503',
    duration_ms: 12,
    attempted_at: new Date(Date.now() - 600_000),
    next_attempt_at: retryAt,
    // Sent to the endpoint's URL, which has not changed since.
    url: db('webhook_endpoints').select('url').where({ id: endpointId }),
  });
}

describe('an endpoint turned off, then on again', () => {
  it('shows what it skipped, says so at Turn on, and Retry failed since… sends it', async () => {
    const { db, receiver } = world.current;
    await failedWithRetryScheduled();
    await page.getByRole('link', { name: 'Settings' }).click();
    await page.getByRole('link', { name: 'Outbound webhooks' }).click();
    await page.getByRole('link', { name: 'Moved CRM' }).click();
    await page.getByRole('heading', { level: 1, name: 'Moved CRM' }).waitFor();

    // Turned off by hand: the scheduled retry is skipped.
    const enabled = page.getByRole('switch', { name: 'Enabled' });
    await enabled.click();
    await eventually(async () => (await enabled.getAttribute('aria-checked')) === 'false');

    // An event recorded while it is off: made skipped, nothing sent.
    await recoverCampaign(db, { id: campaignId, via: 'retry' });
    await eventually(
      async () => (await db('webhook_deliveries').where({ endpoint_id: endpointId, status: 'skipped' })).length === 2,
      15_000,
    );
    expect(receiver.requestsTo(HOOK_PATH)).toHaveLength(0);

    await page.getByRole('button', { name: 'Refresh' }).click();
    const log = page.getByRole('list', { name: 'Deliveries, newest first' });
    const whileOff = log.getByRole('listitem').filter({
      has: page.getByRole('button', { name: /Skipped.*recovery\.recovered.*attempt 1/ }),
    });
    await whileOff.getByRole('button').first().click();
    await whileOff.getByText('skipped: the endpoint was off when this event was recorded').waitFor();
    expect(await whileOff.innerText()).toMatch(/Next attempt\s+None/);
    const failed = log.getByRole('listitem').filter({
      has: page.getByRole('button', { name: /Failed.*recovery\.opened.*503.*attempt 1/ }),
    });
    await failed.getByRole('button').first().click();
    await failed.getByText('HTTP 503', { exact: true }).waitFor();
    // Its retry was skipped (attempt 2): no next attempt is promised.
    expect(await failed.innerText()).toMatch(/Next attempt\s+None/);
    await log.getByRole('button', { name: /Skipped.*recovery\.opened.*attempt 2/ }).waitFor();

    // Turned on: the page says the events it missed are skipped in the log, and how to send them.
    const offSince = (await db('webhook_endpoints').where({ id: endpointId }).first()).disabled_at as Date;
    await enabled.click();
    const said = page.getByRole('status').filter({ hasText: /^Turned on/ });
    await said.waitFor();
    expect(await said.textContent()).toMatch(
      /^Turned on: new events are sent to it\. Events recorded while it was off \(since .+\) are in the delivery log as skipped and are not sent by themselves; Retry failed since… that time sends them\.$/,
    );
    await new Promise((resolve) => setTimeout(resolve, 800));
    expect(receiver.requestsTo(HOOK_PATH)).toHaveLength(0);

    // Retry failed since… starts when it was turned off, and says skipped events are included.
    await page.getByRole('button', { name: 'Retry failed since…' }).click();
    const dialog = page.getByRole('dialog', { name: 'Retry failed deliveries' });
    await dialog.getByText(/events recorded while it was off included/).waitFor();
    const zone = await page.evaluate(() => new Intl.DateTimeFormat().resolvedOptions().timeZone);
    const since = await dialog.getByLabel(`Since (${zone} time)`, { exact: true }).inputValue();
    const expected = await page.evaluate((iso) => {
      const date = new Date(iso);
      return new Date(date.getTime() - date.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
    }, offSince.toISOString());
    expect(since).toBe(expected);
    await dialog.getByRole('button', { name: 'Retry failed' }).click();
    await page.getByRole('status').filter({ hasText: '1 delivery queued to be sent again.' }).waitFor();
    const [sent] = await receiver.waitForRequests(HOOK_PATH, 1);
    expect(sent!.body.type).toBe('recovery.recovered');
    await new Promise((resolve) => setTimeout(resolve, 800));
    expect(receiver.requestsTo(HOOK_PATH)).toHaveLength(1);
  });

  it("the campaign's timeline shows a delivery skipped while the endpoint was off, with its reason", async () => {
    const { db } = world.current;
    // A second campaign event while the endpoint is off again.
    const enabled = page.getByRole('switch', { name: 'Enabled' });
    await enabled.click();
    await eventually(async () => (await enabled.getAttribute('aria-checked')) === 'false');
    const [event] = await db('events')
      .insert({ workspace_id: workspaceId, type: 'recovery.lost', data: { campaign_id: campaignId } })
      .returning('id');
    await eventually(async () => (await db('webhook_deliveries').where({ event_id: event.id })).length === 1, 15_000);

    await page.getByRole('link', { name: 'Campaigns' }).click();
    await page.getByRole('link', { name: 'in_while_off' }).click();
    await page.getByRole('heading', { level: 1, name: 'Invoice in_while_off' }).waitFor();
    const lost = page
      .getByRole('region', { name: 'Timeline' })
      .getByRole('listitem')
      .filter({ hasText: 'recovery.lost' });
    await lost
      .getByText(
        'Not delivered to Moved CRM: Skipped (the endpoint was off when this event was recorded); no attempt sent',
      )
      .waitFor();
    await expect(lost.getByRole('link', { name: 'Moved CRM' }).count()).resolves.toBe(1);
    // The event skipped while it was off, then sent once by Retry failed since… (attempt 2 in the
    // log, after its skipped line): one attempt sent, as the receiver saw.
    const recovered = page
      .getByRole('region', { name: 'Timeline' })
      .getByRole('listitem')
      .filter({ hasText: 'recovery.recovered' });
    await recovered.getByText(/Sent to Moved CRM: Succeeded HTTP 200, 1 attempt, delivered/).waitFor();
  });
});

describe('an endpoint with the longest name there may be', () => {
  it('fits a phone: the heading breaks, the breadcrumb cuts it short, nothing scrolls sideways', async () => {
    const { db } = world.current;
    // 200 characters (the most a name may have) with no space to break at.
    const name = 'w'.repeat(200);
    await db('webhook_endpoints').where({ id: editedEndpointId }).update({ name });
    try {
      await page.setViewportSize({ width: 390, height: 844 });
      await page.goto(`${world.current.url}/dashboard/settings/webhooks/${editedEndpointId}`);
      await page.getByRole('heading', { level: 1, name }).waitFor();
      const overflow = await page.evaluate<number>('document.documentElement.scrollWidth - window.innerWidth');
      expect(overflow).toBeLessThanOrEqual(0);
      const current = page.getByRole('navigation', { name: 'Breadcrumb' }).locator('[aria-current="page"]');
      await expect(current.textContent()).resolves.toBe(name);
      const box = await current.boundingBox();
      expect(box!.x + box!.width).toBeLessThanOrEqual(390);
      // One line: the breadcrumb is no taller than its last item, which sits beside the link.
      const breadcrumb = await page.getByRole('navigation', { name: 'Breadcrumb' }).boundingBox();
      expect(breadcrumb!.height).toBeLessThan(2 * box!.height);
    } finally {
      await page.setViewportSize({ width: 1280, height: 900 });
      await db('webhook_endpoints').where({ id: editedEndpointId }).update({ name: 'Edited CRM' });
    }
  });
});

describe("an endpoint's delivery log after its URL was edited", () => {
  it('says "Sent to" the old URL under the attempt made before, and nothing under the one made after', async () => {
    const { receiver } = world.current;
    await page.goto(`${world.current.url}/dashboard/settings/webhooks/${editedEndpointId}`);
    await page.getByRole('heading', { level: 1, name: 'Edited CRM' }).waitFor();
    await page.getByRole('button', { name: 'Send test' }).click();
    await receiver.waitForRequests(OLD_PATH, 1);
    await page.getByRole('status').filter({ hasText: 'Test delivery:' }).waitFor();

    await page.getByRole('button', { name: 'Edit' }).click();
    const form = page.getByRole('dialog', { name: 'Edit endpoint' });
    await form.getByLabel('URL').fill(receiver.url(NEW_PATH));
    await form.getByRole('button', { name: 'Save' }).click();
    await form.waitFor({ state: 'detached' });
    await page.getByRole('button', { name: 'Send test' }).click();
    await receiver.waitForRequests(NEW_PATH, 1);

    await page.reload();
    const entries = page.getByRole('list', { name: 'Deliveries, newest first' }).getByRole('listitem');
    await entries.nth(1).waitFor();
    await expect(entries.count()).resolves.toBe(2);
    // Newest first: the test sent to the new URL says nothing more; the one before says where it went.
    await expect(
      entries
        .nth(0)
        .getByText(/Sent to/)
        .count(),
    ).resolves.toBe(0);
    await expect(
      entries
        .nth(1)
        .getByText(`Sent to ${receiver.url(OLD_PATH)}`, { exact: true })
        .isVisible(),
    ).resolves.toBe(true);
    await expect(page.getByText(`Sent to ${receiver.url(NEW_PATH)}`).count()).resolves.toBe(0);

    // An attempt whose URL nobody recorded (logged before migration 0033): listed, and nothing
    // said about where it went.
    await world.current.db('webhook_attempts').where({ endpoint_id: editedEndpointId }).update({ url: null });
    await page.reload();
    await entries.nth(1).waitFor();
    await expect(entries.count()).resolves.toBe(2);
    await expect(page.getByText(/Sent to/).count()).resolves.toBe(0);
  }, 60_000);
});
