import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { BrowserContext, Page } from 'playwright-core';
import { hashPassword, loadFixtures } from '@retention/domain';
import { testSecretsKeyBytes } from '@retention/testkit';
import { desktopPage, PASSWORD, signInThroughForm, useDashboardWorld } from './support/dashboard-world.js';

/**
 * The delivery log says where an attempt went when the endpoint's URL has been edited since
 * (docs/decisions.md, "Outbound webhooks"), in a real headless Chromium against the real API and
 * an HTTPS receiver: a Send test to the old URL, the URL edited in the form, a Send test to the
 * new one. Only the old attempt says "Sent to".
 */
const world = useDashboardWorld();

const OWNER = 'owner@moved.test';
const OLD_PATH = '/hooks/old';
const NEW_PATH = '/hooks/new';
let context: BrowserContext;
let page: Page;
let endpointId = '';

beforeAll(async () => {
  const { db, receiver } = world.current;
  const loaded = await loadFixtures(db, testSecretsKeyBytes(), {
    workspaces: [
      {
        key: 'moved',
        name: 'Moved',
        processor: 'connected',
        users: [{ key: 'owner', email: OWNER, role: 'owner' }],
        webhooks: [{ key: 'hook', name: 'Moved CRM', url: receiver.url(OLD_PATH) }],
      },
    ],
  });
  const hook = loaded.workspaces.moved!.webhooks.hook!;
  endpointId = hook.id;
  for (const path of [OLD_PATH, NEW_PATH]) {
    receiver.route(path, { secret: hook.secret, behaviour: { kind: 'status', status: 200 } });
  }
  await db('users')
    .where({ email: OWNER })
    .update({ password_hash: await hashPassword(PASSWORD) });
  ({ context, page } = await desktopPage(world.current.browser));
  await signInThroughForm(page, world.current.url, OWNER);
}, 60_000);

afterAll(async () => {
  await context?.close();
});

describe("an endpoint's delivery log after its URL was edited", () => {
  it('says "Sent to" the old URL under the attempt made before, and nothing under the one made after', async () => {
    const { receiver } = world.current;
    await page.goto(`${world.current.url}/dashboard/settings/webhooks/${endpointId}`);
    await page.getByRole('heading', { level: 1, name: 'Moved CRM' }).waitFor();
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
  }, 60_000);
});
