import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { BrowserContext, Locator, Page } from 'playwright-core';
import { hashPassword, loadFixtures } from '@retention/domain';
import { eventually, testSecretsKeyBytes } from '@retention/testkit';
import { desktopPage, PASSWORD, signInThroughForm, useDashboardWorld } from './support/dashboard-world.js';

/**
 * An endpoint's delivery log, in a real headless Chromium against the real API and an HTTPS
 * receiver (docs/dashboard-ui.md, "Delivery log"): its filters live in the page's address, so a
 * reload keeps them; an attempt's details tell a retry made from one still to come; a Resend with
 * exactly a page of rows shown keeps every row shown.
 *
 * The log holds exactly one page (50): a delivery given up after 49 failed attempts, each retried
 * a minute later, and, newest, a delivery whose one failed attempt is retried in an hour.
 */
const world = useDashboardWorld();

const EMAIL = 'owner@acme-log.test';
const HOOK_PATH = '/hooks/acme-log';
const MINUTE = 60_000;
let context: BrowserContext;
let page: Page;
let endpointId = '';
let workspaceId = '';
let endpointUrl = '';

/** An event out of the outbox in its own transaction: nothing dispatches it by itself. */
async function quietEvent(type: string, at: Date): Promise<{ id: string; seq: string }> {
  return world.current.db.transaction(async (trx) => {
    const [row] = await trx('events')
      .insert({ workspace_id: workspaceId, type, data: { hello: 'world' }, created_at: at })
      .returning(['id', 'seq']);
    await trx('event_outbox').where({ event_id: row.id }).delete();
    return row as { id: string; seq: string };
  });
}

beforeAll(async () => {
  const { db, receiver } = world.current;
  const loaded = await loadFixtures(db, testSecretsKeyBytes(), {
    workspaces: [
      {
        key: 'acme',
        name: 'Acme Log',
        processor: 'connected',
        users: [{ key: 'owner', email: EMAIL, role: 'owner' }],
        webhooks: [{ key: 'hook', name: 'Log CRM', url: receiver.url(HOOK_PATH) }],
      },
    ],
  });
  const ids = loaded.workspaces.acme!;
  workspaceId = ids.id;
  endpointId = ids.webhooks.hook!.id;
  endpointUrl = receiver.url(HOOK_PATH);
  receiver.route(HOOK_PATH, { secret: ids.webhooks.hook!.secret, behaviour: { kind: 'status', status: 200 } });

  const start = Date.now() - 200 * MINUTE;
  const old = await quietEvent('recovery.opened', new Date(start));
  const [givenUp] = await db('webhook_deliveries')
    .insert({
      workspace_id: workspaceId,
      endpoint_id: endpointId,
      event_id: old.id,
      event_seq: old.seq,
      event_type: 'recovery.opened',
      status: 'failed',
      attempt_count: 49,
      next_attempt_at: null,
      created_at: new Date(start),
    })
    .returning('id');
  await db('webhook_attempts').insert(
    Array.from({ length: 49 }, (_, index) => ({
      delivery_id: givenUp.id,
      endpoint_id: endpointId,
      event_type: 'recovery.opened',
      attempt: index + 1,
      outcome: 'failed',
      http_status: 503,
      error: 'HTTP 503',
      duration_ms: 12,
      attempted_at: new Date(start + index * MINUTE),
      // Each retried a minute later; the last one given up.
      next_attempt_at: index < 48 ? new Date(start + (index + 1) * MINUTE) : null,
      url: endpointUrl,
    })),
  );
  const recent = await quietEvent('recovery.lost', new Date(Date.now() - MINUTE));
  const retryAt = new Date(Date.now() + 60 * MINUTE);
  const [pending] = await db('webhook_deliveries')
    .insert({
      workspace_id: workspaceId,
      endpoint_id: endpointId,
      event_id: recent.id,
      event_seq: recent.seq,
      event_type: 'recovery.lost',
      status: 'pending',
      attempt_count: 1,
      next_attempt_at: retryAt,
      created_at: new Date(Date.now() - MINUTE),
    })
    .returning('id');
  await db('webhook_attempts').insert({
    delivery_id: pending.id,
    endpoint_id: endpointId,
    event_type: 'recovery.lost',
    attempt: 1,
    outcome: 'failed',
    http_status: 503,
    error: 'HTTP 503',
    duration_ms: 12,
    attempted_at: new Date(Date.now() - MINUTE),
    next_attempt_at: retryAt,
    url: endpointUrl,
  });

  await db('users')
    .where({ email: EMAIL })
    .update({ password_hash: await hashPassword(PASSWORD) });
  ({ context, page } = await desktopPage(world.current.browser));
  await signInThroughForm(page, world.current.url, EMAIL);
}, 60_000);

afterAll(async () => {
  await context?.close();
});

const log = (): Locator => page.getByRole('list', { name: 'Deliveries, newest first' });
const rows = (): Locator => log().getByRole('listitem');
/** The log's row of an event type and attempt number. */
const row = (type: string, attempt: number): Locator =>
  rows()
    .filter({ hasText: type })
    .filter({ hasText: new RegExp(`attempt ${attempt}(?!\\d)`) });

async function openEndpoint(): Promise<void> {
  await page.goto(`${world.current.url}/dashboard/settings/webhooks/${endpointId}`);
  await page.getByRole('heading', { level: 1, name: 'Log CRM' }).waitFor();
  await rows().nth(49).waitFor();
}

describe('the delivery log', () => {
  it('keeps its filters in the address: a reload shows the filtered log with the selects set', async () => {
    await openEndpoint();
    await page.getByLabel('Outcome').selectOption('failed');
    await page.getByLabel('Event type').selectOption('recovery.lost');
    await eventually(async () => (await rows().count()) === 1);
    const address = new URL(page.url());
    expect(address.searchParams.get('log_outcome')).toBe('failed');
    expect(address.searchParams.get('log_event_type')).toBe('recovery.lost');

    await page.reload();
    await page.getByRole('heading', { level: 1, name: 'Log CRM' }).waitFor();
    await row('recovery.lost', 1).waitFor();
    expect(await rows().count()).toBe(1);
    expect(await page.getByLabel('Outcome').inputValue()).toBe('failed');
    expect(await page.getByLabel('Event type').inputValue()).toBe('recovery.lost');

    // All again: the address drops them.
    await page.getByLabel('Outcome').selectOption('');
    await page.getByLabel('Event type').selectOption('');
    await rows().nth(49).waitFor();
    expect(new URL(page.url()).search).toBe('');
  });

  it('tells a retry already made from one still to come', async () => {
    await openEndpoint();
    // The retry of attempt 1 was made (attempt 2, a minute later): no "Next attempt" in the past.
    const first = row('recovery.opened', 1);
    await first.getByRole('button', { expanded: false }).first().click();
    const details = first.locator('.log-details');
    await details.waitFor();
    expect(await details.innerText()).not.toMatch(/Next attempt/);
    expect(await details.innerText()).toMatch(/Retry\s+Made [^]+\(attempt 2\)/);
    // Given up: no retry at all.
    const last = row('recovery.opened', 49);
    await last.getByRole('button', { expanded: false }).first().click();
    expect(await last.locator('.log-details').innerText()).toMatch(/Next attempt\s+None/);
    // Still to come: the next attempt, as before.
    const pending = row('recovery.lost', 1);
    await pending.getByRole('button', { expanded: false }).first().click();
    expect(await pending.locator('.log-details').innerText()).toMatch(/Next attempt\s+\w{3} \d+, \d{4}/);
  });

  it('keeps every row shown after a Resend with exactly a page shown', async () => {
    await openEndpoint();
    expect(await rows().count()).toBe(50);
    const newest = row('recovery.opened', 49);
    await newest.getByRole('button', { expanded: false }).first().click();
    await newest.getByRole('button', { name: 'Resend' }).click();
    await newest.getByText('Resent:').waitFor();
    // The resend's attempt at the top, and the oldest row still shown below.
    await row('recovery.opened', 50).waitFor();
    await eventually(async () => (await rows().count()) === 51);
    await row('recovery.opened', 1).waitFor();
  });
});
