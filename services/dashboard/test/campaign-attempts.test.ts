import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { BrowserContext, Page } from 'playwright-core';
import { eventually } from '@retention/testkit';
import {
  FakeStripe,
  legacyInvoice,
  newApiKey,
  newWebhookSecret,
  nowSeconds,
  paymentIntent,
  postToConnection,
  stripeCustomer,
  stripeEvent,
  stripeSubscription,
  type StripeObject,
} from '../../worker/test/processor/stripe-kit.js';
import { desktopPage, signInThroughForm, useDashboardWorld } from './support/dashboard-world.js';
import { connectedStripeWorkspace } from './support/stripe-workspace.js';
import { screenshot } from './support/page-checks.js';

/**
 * A campaign's page shows each payment attempt Stripe reported failed (its number, time and
 * decline) and, in flight, when Stripe retries next or that it scheduled no retry
 * (docs/dashboard-ui.md, "Campaign"): signed Stripe events through the real API and worker, a
 * Stripe stand-in answering the decline codes, in a real headless Chromium.
 */

let stripe: FakeStripe;
const apiKey = newApiKey();
beforeAll(async () => {
  stripe = await FakeStripe.start(apiKey);
});
afterAll(() => stripe?.close());
const world = useDashboardWorld({ stripeApiBase: () => stripe.url });

const EMAIL = 'owner@attempts.test';
const DAY = 86_400;
const secret = newWebhookSecret();
let context: BrowserContext;
let page: Page;
let workspaceId = '';
let webhookUrl = '';
let customer: StripeObject;
let subscription: StripeObject;

/** POSTs a signed event and waits until the worker applied it. */
async function deliver(event: { id: string }): Promise<void> {
  expect((await postToConnection(webhookUrl, event, secret)).status).toBe(200);
  await eventually(async () => {
    const stored = await world.current.db('processor_events').where({ psp_event_id: event.id }).first();
    return stored?.state === 'applied' ? stored : null;
  }, 15_000);
}

/** The `attempt`-th failure of the invoice, declined with `code`, Stripe retrying at `next` (or never). */
async function failAttempt(invoice: StripeObject, attempt: number, created: number, code: string, next: number | null) {
  const intent = invoice.payment_intent as string;
  stripe.paymentIntents.set(intent, paymentIntent(intent, code));
  await deliver(
    stripeEvent(
      'invoice.payment_failed',
      { ...invoice, attempt_count: attempt, next_payment_attempt: next },
      { created },
    ),
  );
}

async function openCampaign(invoiceId: string): Promise<void> {
  const campaign = await world.current
    .db('recovery_campaigns')
    .where({ workspace_id: workspaceId, psp_invoice_id: invoiceId })
    .first();
  await page.goto(`${world.current.url}/dashboard/campaigns/${campaign.id}`);
  await page.getByRole('heading', { level: 1, name: `Invoice ${invoiceId}` }).waitFor();
}

const timeline = () => page.getByRole('region', { name: 'Timeline' });
const entry = (text: string | RegExp) => timeline().getByRole('listitem').filter({ hasText: text });
const iso = (seconds: number) => new Date(seconds * 1000).toISOString();

beforeAll(async () => {
  ({ workspaceId, webhookUrl } = await connectedStripeWorkspace(world.current, {
    name: 'Attempts',
    email: EMAIL,
    webhookSecret: secret,
    apiKey: apiKey,
  }));
  customer = stripeCustomer({ email: 'dana@attempts-customers.test', name: 'Dana Scully' });
  subscription = stripeSubscription(customer.id);
  await deliver(stripeEvent('customer.created', customer, { created: nowSeconds() - 40 * DAY }));
  await deliver(stripeEvent('customer.subscription.created', subscription, { created: nowSeconds() - 40 * DAY }));
  ({ context, page } = await desktopPage(world.current.browser));
  await signInThroughForm(page, world.current.url, EMAIL);
}, 60_000);

afterAll(async () => {
  await context?.close();
});

describe("a campaign's payment attempts", () => {
  it('in flight: each failed attempt with its time and decline, then when Stripe retries next, or that it will not', async () => {
    const invoice = legacyInvoice(customer, subscription.id);
    const first = nowSeconds() - 4 * DAY;
    const second = first + 3 * DAY;
    const next = second + 5 * DAY;
    await failAttempt(invoice, 1, first, 'insufficient_funds', first + 3 * DAY);
    await failAttempt(invoice, 2, second, 'do_not_honor', next);
    await openCampaign(invoice.id);

    const attempt1 = entry('Payment attempt 1 failed');
    await attempt1.getByText('Payment attempt 1 failed: Insufficient funds (insufficient_funds)').waitFor();
    await expect(attempt1.getByRole('time').getAttribute('datetime')).resolves.toBe(iso(first));
    await expect(attempt1.getByRole('time').getAttribute('title')).resolves.toMatch(/UTC/);
    const attempt2 = entry('Payment attempt 2 failed');
    await attempt2.getByText('Payment attempt 2 failed: Declined by the bank (do not honor) (do_not_honor)').waitFor();
    await expect(attempt2.getByRole('time').getAttribute('datetime')).resolves.toBe(iso(second));
    // The existing entries stay, with their names, in time order: the first failure, then the
    // opening it caused, then the retry that failed; Stripe's next retry last.
    const texts = await timeline().locator('ol.timeline > li').allInnerTexts();
    expect(texts.map((text) => text.split('\n')[0]!.replace(/^.*?(?=Payment|Stripe|No retry)/, ''))).toEqual([
      'Payment attempt 1 failed: Insufficient funds (insufficient_funds)',
      expect.stringMatching(/^Payment failed, recovery started/),
      'Payment attempt 2 failed: Declined by the bank (do not honor) (do_not_honor)',
      expect.stringMatching(/^Stripe's next retry: /),
    ]);
    const retry = entry("Stripe's next retry:");
    await expect(retry.getByRole('time').getAttribute('datetime')).resolves.toBe(iso(next));
    await screenshot(page, 'campaign-attempts-1280');

    // The last retry fails and Stripe schedules none.
    await failAttempt(invoice, 3, second + 60, 'insufficient_funds', null);
    await page.reload();
    await entry('Payment attempt 3 failed').waitFor();
    await entry('No retry scheduled by Stripe').waitFor();
    await expect(entry("Stripe's next retry").count()).resolves.toBe(0);
  });

  it('recovered via retry: the retries that failed before it, and no next retry', async () => {
    const invoice = legacyInvoice(customer, subscription.id);
    const first = nowSeconds() - 10 * DAY;
    await failAttempt(invoice, 1, first, 'insufficient_funds', first + 3 * DAY);
    await failAttempt(invoice, 2, first + 3 * DAY, 'insufficient_funds', first + 8 * DAY);
    await deliver(
      stripeEvent(
        'invoice.paid',
        { ...invoice, status: 'paid', attempt_count: 3, next_payment_attempt: null },
        { created: first + 8 * DAY },
      ),
    );
    await openCampaign(invoice.id);
    await page.getByText('Recovered via').waitFor();
    await entry('Payment attempt 1 failed').waitFor();
    await entry('Payment attempt 2 failed').waitFor();
    await entry('Payment recovered').waitFor();
    await expect(entry(/next retry|No retry scheduled/).count()).resolves.toBe(0);
  });
});
