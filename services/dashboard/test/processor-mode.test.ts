import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { BrowserContext, Page } from 'playwright-core';
import { eventually } from '@retention/testkit';
import {
  FakeStripe,
  newApiKey,
  newWebhookSecret,
  postToConnection,
  stripeCustomer,
  stripeEvent,
} from '../../worker/test/processor/stripe-kit.js';
import { desktopPage, signInThroughForm, useDashboardWorld } from './support/dashboard-world.js';
import { connectedStripeWorkspace } from './support/stripe-workspace.js';

/**
 * Settings, Processor shows the connection's mode and what was set aside, and a key of the other
 * mode switches it only once confirmed, saying that what the old mode imported stays (docs/processor.md,
 * "Mode"), in a real headless Chromium against the real dashboard API, worker and a Stripe stand-in.
 */

let stripe: FakeStripe;
const testKey = newApiKey();
const liveKey = `rk_live_${'L'.repeat(24)}5678`;
beforeAll(async () => {
  stripe = await FakeStripe.start(testKey);
  // The stand-in answers the live key's check as Stripe would.
  stripe.override = (request, url) =>
    request.headers.authorization === `Bearer ${liveKey}`
      ? { status: 200, body: { object: 'list', data: [], has_more: false, url: url.pathname } }
      : null;
});
afterAll(() => stripe?.close());
const world = useDashboardWorld({ stripeApiBase: () => stripe.url });

const EMAIL = 'owner@modes.test';
let context: BrowserContext;
let page: Page;
let workspaceId = '';
let webhookUrl = '';
const secret = newWebhookSecret();

beforeAll(async () => {
  ({ workspaceId, webhookUrl } = await connectedStripeWorkspace(world.current, {
    name: 'Modes',
    email: EMAIL,
    webhookSecret: secret,
    apiKey: testKey,
  }));
  ({ context, page } = await desktopPage(world.current.browser));
  await signInThroughForm(page, world.current.url, EMAIL);
}, 60_000);

afterAll(async () => {
  await context?.close();
});

async function openProcessorPage(): Promise<void> {
  await page.goto(`${world.current.url}/dashboard/settings/processor`);
  await page.getByRole('heading', { level: 1, name: 'Processor' }).waitFor();
}
const details = () => page.getByRole('region', { name: 'Stripe' });
const row = () => world.current.db('processor_connections').where({ workspace_id: workspaceId }).first();

describe("the processor page's mode", () => {
  it('shows the mode and the events set aside, by reason', async () => {
    // A connected account's event (Stripe Connect), set aside by the worker.
    const event = { ...stripeEvent('customer.created', stripeCustomer()), account: 'acct_1OTHERxxxxxxxx' };
    expect((await postToConnection(webhookUrl, event, secret)).status).toBe(200);
    await eventually(async () => {
      const stored = await world.current.db('processor_events').where({ psp_event_id: event.id }).first();
      return stored?.state === 'ignored' ? stored : null;
    }, 15_000);
    await openProcessorPage();
    await details().getByText('Test mode', { exact: true }).waitFor();
    await details().getByText('1 from connected accounts (Stripe Connect)').waitFor();
  });

  it('asks before a key of the other mode switches it, saying the old data stays; Cancel changes nothing', async () => {
    await openProcessorPage();
    const before = await row();
    const form = page.getByRole('form', { name: 'Connect again' });
    await form.getByLabel('Webhook signing secret').fill(secret);
    await form.getByLabel('Restricted API key (optional)').fill(liveKey);
    await form.getByRole('button', { name: 'Connect', exact: true }).click();
    let confirm = page.getByRole('dialog', { name: 'Switch to live mode' });
    await confirm
      .getByText(
        'This is a live mode key and the connection is in test mode. Switching makes it a live mode connection: ' +
          'the data already imported in test mode stays in this workspace',
        { exact: false },
      )
      .waitFor();
    await confirm.getByRole('button', { name: 'Cancel' }).click();
    await confirm.waitFor({ state: 'detached' });
    expect(await row()).toMatchObject({ mode: 'test', api_key_sealed: before.api_key_sealed });
    await details().getByText('Test mode', { exact: true }).waitFor();

    await form.getByRole('button', { name: 'Connect', exact: true }).click();
    confirm = page.getByRole('dialog', { name: 'Switch to live mode' });
    await confirm.getByRole('button', { name: 'Switch to live mode' }).click();
    await confirm.waitFor({ state: 'detached' });
    await details().getByText('Live mode', { exact: true }).waitFor();
    await details().getByText('rk_…5678', { exact: true }).waitFor();
    expect(await row()).toMatchObject({ mode: 'live', api_key_last4: '5678' });
    expect(
      await world.current.db('security_events').where({ workspace_id: workspaceId, action: 'processor.mode_switched' }),
    ).toHaveLength(1);
    await expect(page.content()).resolves.not.toContain(liveKey);
  });
});
