import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { BrowserContext, Page } from 'playwright-core';
import { hashPassword, loadFixtures } from '@retention/domain';
import { testSecretsKeyBytes } from '@retention/testkit';
import { desktopPage, PASSWORD, signInThroughForm, useDashboardWorld } from './support/dashboard-world.js';

/**
 * A campaign's timeline follows its events' deliveries by itself (docs/dashboard-ui.md,
 * "Campaign detail"), in a real headless Chromium against the real API, worker and an HTTPS
 * receiver: not only until the deliveries are made, but until a pending one is settled.
 */
const world = useDashboardWorld();

const EMAIL = 'owner@stark.test';
const HOOK_PATH = '/hooks/stark';
/** The receiver holds every attempt until the test lets them through. */
let letThrough = false;
let context: BrowserContext;
let page: Page;

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
        webhooks: [{ key: 'hook', name: 'Stark CRM', url: receiver.url(HOOK_PATH), events: ['recovery.lost'] }],
      },
    ],
  });
  receiver.route(HOOK_PATH, {
    secret: loaded.workspaces.stark!.webhooks.hook!.secret,
    // Hanging until the sender's timeout (3 s here) keeps the delivery pending for a while.
    behaviour: () => (letThrough ? { kind: 'status', status: 200, body: 'ok' } : { kind: 'hang' }),
  });
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
    // The delivery is made, and its attempts do not get through yet.
    await lostEvent.getByText(/Stark CRM: pending/).waitFor({ timeout: 20_000 });
    await world.current.receiver.waitForRequests(HOOK_PATH, 1);

    // The endpoint answers again: the next attempt succeeds, and the page says so by itself.
    letThrough = true;
    await lostEvent.getByText(/Stark CRM: succeeded HTTP 200/).waitFor({ timeout: 20_000 });
    await expect(lostEvent.getByText(/pending/i).count()).resolves.toBe(0);
  });
});
