import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from '@jest/globals';
import Stripe from 'stripe';
import { listSecurityEvents, processorStatus } from '@retention/domain';
import { createLogger, createMetricsRegistry, renderMetrics } from '@retention/runtime';
import { eventually, REPO_ROOT, runCli } from '@retention/testkit';
import { registerWorkerMetrics } from '../../src/metrics.js';
import { useProcessorWorld } from './harness.js';
import {
  basilInvoice,
  invoicePayment,
  legacyInvoice,
  newWebhookSecret,
  nowSeconds,
  postToConnection,
  paymentIntent,
  stripeCustomer,
  stripeEvent,
  stripeSubscription,
  type StripeObject,
} from './stripe-kit.js';

/**
 * Every row of the event table in docs/processor.md, end to end: a signed Stripe event POSTed
 * to the API, applied by the worker through the domain actions, and the webhooks our own
 * endpoints receive (over HTTPS, verified by the test receiver).
 */

const { world, setUp } = useProcessorWorld();
const db = () => world.current.db;

const customerRow = (workspaceId: string, pspId: string) =>
  db()('customers').where({ workspace_id: workspaceId, psp_customer_id: pspId }).first();
const subscriptionRow = (workspaceId: string, pspId: string) =>
  db()('subscriptions').where({ workspace_id: workspaceId, psp_subscription_id: pspId }).first();
const campaignRow = (workspaceId: string, invoiceId: string) =>
  db()('recovery_campaigns').where({ workspace_id: workspaceId, psp_invoice_id: invoiceId }).first();

/** A customer with an active subscription, mirrored through their own events. */
async function subscribedCustomer(
  w: Awaited<ReturnType<typeof setUp>>,
  subscriptionFields: Partial<StripeObject> = {},
) {
  const customer = stripeCustomer({ metadata: { tags: 'VIP, beta ,' } });
  const subscription = stripeSubscription(customer.id, subscriptionFields);
  expect((await w.deliver(stripeEvent('customer.created', customer, { created: nowSeconds() - 600 }))).state).toBe(
    'applied',
  );
  expect(
    (await w.deliver(stripeEvent('customer.subscription.created', subscription, { created: nowSeconds() - 500 })))
      .state,
  ).toBe('applied');
  return { customer, subscription };
}

/** `seconds` before now, in Stripe's `created` (whole seconds). */
const ago = (seconds: number) => nowSeconds() - seconds;

/*
 * The events of the ordering cases below, each made at the time it happened (`created`): the
 * cases deliver them in another order than that.
 */
const failed = (invoice: StripeObject, created: number) => stripeEvent('invoice.payment_failed', invoice, { created });
/** Paid at Stripe's `attempts`-th attempt (its attempt_count). */
const paid = (invoice: StripeObject, attempts: number, created: number) =>
  stripeEvent('invoice.paid', { ...invoice, status: 'paid', attempt_count: attempts }, { created });
/** The customer's default card changed to `card`, from the one stripeCustomer gives them. */
const cardChanged = (customer: StripeObject, card: string, created: number) =>
  stripeEvent(
    'customer.updated',
    { ...customer, invoice_settings: { ...customer.invoice_settings, default_payment_method: card } },
    { created, previous: { invoice_settings: { default_payment_method: 'pm_1OldCard' } } },
  );

describe('customers and subscriptions', () => {
  it('upserts the customer (email, name, tags from metadata.tags) and never lets an older update win', async () => {
    const w = await setUp();
    const customer = stripeCustomer({ metadata: { tags: 'VIP, beta ,' } });
    await w.deliver(stripeEvent('customer.created', customer, { created: nowSeconds() - 100 }));
    expect(await customerRow(w.workspaceId, customer.id)).toMatchObject({
      email: customer.email,
      name: 'Jenny Rosen',
      tags: ['vip', 'beta'],
    });
    await w.deliver(
      stripeEvent('customer.updated', { ...customer, email: 'new@example.com' }, { created: nowSeconds() - 10 }),
    );
    // Older than the update already applied: stored, but changes nothing.
    await w.deliver(
      stripeEvent('customer.updated', { ...customer, email: 'old@example.com' }, { created: nowSeconds() - 50 }),
    );
    expect((await customerRow(w.workspaceId, customer.id)).email).toBe('new@example.com');
    expect(await db()('customers').where({ workspace_id: w.workspaceId })).toHaveLength(1);
  });

  it('upserts the subscription through created, updated, paused and resumed: status, amount × quantity, interval, dates', async () => {
    const w = await setUp();
    const { customer, subscription } = await subscribedCustomer(w, {
      status: 'trialing',
      trial_end: nowSeconds() + 86_400 * 10,
    });
    expect(await subscriptionRow(w.workspaceId, subscription.id)).toMatchObject({
      status: 'trialing',
      plan_name: 'Pro',
      amount_cents: 4900,
      currency: 'usd',
      interval: 'month',
      trial_end: new Date(subscription.trial_end * 1000),
      current_period_end: new Date(subscription.current_period_end * 1000),
      canceled_at: null,
    });
    const yearly = {
      ...subscription,
      status: 'unpaid',
      trial_end: null,
      items: {
        object: 'list',
        data: [
          {
            ...subscription.items.data[0],
            price: {
              ...subscription.items.data[0].price,
              unit_amount: 50_000,
              recurring: { interval: 'year', interval_count: 1 },
            },
            quantity: 3,
            current_period_end: 1_900_000_000,
          },
        ],
      },
      current_period_end: undefined,
    };
    await w.deliver(stripeEvent('customer.subscription.updated', yearly, { created: nowSeconds() - 40 }));
    expect(await subscriptionRow(w.workspaceId, subscription.id)).toMatchObject({
      status: 'past_due', // unpaid
      amount_cents: 150_000,
      interval: 'year',
      current_period_end: new Date(1_900_000_000 * 1000), // basil: on the item
    });
    await w.deliver(
      stripeEvent('customer.subscription.paused', { ...yearly, status: 'paused' }, { created: nowSeconds() - 30 }),
    );
    expect((await subscriptionRow(w.workspaceId, subscription.id)).status).toBe('paused');
    // An older update arriving late changes nothing.
    await w.deliver(
      stripeEvent('customer.subscription.updated', { ...yearly, status: 'active' }, { created: nowSeconds() - 35 }),
    );
    expect((await subscriptionRow(w.workspaceId, subscription.id)).status).toBe('paused');
    await w.deliver(
      stripeEvent('customer.subscription.resumed', { ...yearly, status: 'active' }, { created: nowSeconds() - 20 }),
    );
    expect((await subscriptionRow(w.workspaceId, subscription.id)).status).toBe('active');
    expect((await customerRow(w.workspaceId, customer.id)).tags).toEqual(['vip', 'beta']);
  });

  it('records a win-back when a customer whose subscription was canceled subscribes again', async () => {
    const w = await setUp();
    const { customer, subscription } = await subscribedCustomer(w);
    const canceledAt = nowSeconds() - 86_400 * 12;
    await w.deliver(
      stripeEvent(
        'customer.subscription.deleted',
        {
          ...subscription,
          status: 'canceled',
          canceled_at: canceledAt,
          ended_at: canceledAt,
          cancellation_details: { reason: null, feedback: null, comment: null },
        },
        { created: nowSeconds() - 400 },
      ),
    );
    const back = stripeSubscription(customer.id, { created: nowSeconds() - 60 });
    await w.deliver(stripeEvent('customer.subscription.created', back, { created: nowSeconds() - 60 }));
    const [winback] = await w.webhooks(1);
    expect(winback).toEqual({
      type: 'winback.recorded',
      data: expect.objectContaining({
        customer_email: customer.email,
        psp_subscription_id: back.id,
        days_away: 11,
        amount_cents: 4900,
        currency: 'usd',
      }),
    });
  });

  it('sends trial.reminder_sent on customer.subscription.trial_will_end', async () => {
    const w = await setUp();
    const trialEnd = nowSeconds() + 86_400 * 3;
    const { subscription } = await subscribedCustomer(w, { status: 'trialing', trial_end: trialEnd });
    await w.deliver(stripeEvent('customer.subscription.trial_will_end', subscription));
    const [reminder] = await w.webhooks(1);
    expect(reminder).toMatchObject({
      type: 'trial.reminder_sent',
      data: { trial_end: new Date(trialEnd * 1000).toISOString() },
    });
  });
});

describe('failed invoices', () => {
  it('opens a campaign on the first failure (pre-basil shape, decline code from the payment intent); a later failure opens nothing', async () => {
    const w = await setUp();
    const { customer, subscription } = await subscribedCustomer(w);
    const invoice = legacyInvoice(customer, subscription.id);
    w.stripe.paymentIntents.set(invoice.payment_intent, paymentIntent(invoice.payment_intent, 'insufficient_funds'));
    const failedAt = nowSeconds() - 120;
    await w.deliver(stripeEvent('invoice.payment_failed', invoice, { created: failedAt }));
    expect(await campaignRow(w.workspaceId, invoice.id)).toMatchObject({
      status: 'in_flight',
      amount_cents: 4900,
      currency: 'usd',
      decline_code: 'insufficient_funds',
      first_failed_at: new Date(failedAt * 1000),
    });
    await w.deliver(
      stripeEvent('invoice.payment_failed', { ...invoice, attempt_count: 2 }, { created: failedAt + 60 }),
    );
    const [opened] = await w.webhooks(1);
    expect(opened).toMatchObject({
      type: 'recovery.opened',
      data: {
        psp_invoice_id: invoice.id,
        decline_code: 'insufficient_funds',
        decline_category: 'soft',
        customer_email: customer.email,
      },
    });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(world.current.receiver.requestsTo(w.endpointPath)).toHaveLength(1);
    expect(await db()('recovery_campaigns').where({ workspace_id: w.workspaceId })).toHaveLength(1);
  });

  it.each([
    // Stripe's ISK is two-decimal (100 is one króna), ISO's zero-decimal: 5,000 kr is 500000 there, 5000 here.
    ['isk', 500_000, 245_000, 5_000, 4_900],
    // Stripe's MGA is zero-decimal, ISO's two-decimal: Ar 20,000 is 20000 there, 2000000 here.
    ['mga', 20_000, 9_800, 2_000_000, 1_960_000],
    // JPY and KWD are the same in both.
    ['jpy', 5_000, 2_450, 5_000, 4_900],
    ['kwd', 12_345, 2_450, 12_345, 4_900],
  ])(
    'stores a %s amount in ISO 4217 minor units, whatever Stripe counts in (Stripe %d due, %d a unit)',
    async (currency, due, unit, campaignAmount, subscriptionAmount) => {
      const w = await setUp();
      const customer = stripeCustomer();
      const base = stripeSubscription(customer.id);
      const item = (base.items as { data: StripeObject[] }).data[0]!;
      const subscription: StripeObject = {
        ...base,
        currency,
        items: {
          ...(base.items as object),
          data: [{ ...item, price: { ...(item.price as object), currency, unit_amount: unit } }],
        },
      };
      await w.deliver(stripeEvent('customer.created', customer, { created: nowSeconds() - 600 }));
      await w.deliver(stripeEvent('customer.subscription.created', subscription, { created: nowSeconds() - 500 }));
      const invoice = legacyInvoice(customer, subscription.id as string, {
        currency,
        amount_due: due,
        amount_remaining: due,
      });
      await w.deliver(stripeEvent('invoice.payment_failed', invoice, { created: nowSeconds() - 120 }));
      expect(await campaignRow(w.workspaceId, invoice.id)).toMatchObject({ amount_cents: campaignAmount, currency });
      expect(await subscriptionRow(w.workspaceId, subscription.id as string)).toMatchObject({
        amount_cents: subscriptionAmount,
        currency,
      });
      const [opened] = await w.webhooks(1);
      expect(opened!.data).toMatchObject({ amount_cents: campaignAmount, currency });
    },
  );

  it('reads the basil shape: subscription under parent, decline code from InvoicePayments', async () => {
    const w = await setUp();
    const { customer, subscription } = await subscribedCustomer(w);
    const invoice = basilInvoice(customer, subscription.id);
    // Two failed payments: the newer one's decline code is the event's.
    w.stripe.invoicePayments.set(invoice.id, [
      invoicePayment(invoice, 'do_not_honor', { created: nowSeconds() - 3600 }),
      invoicePayment(invoice, 'expired_card'),
    ]);
    await w.deliver(stripeEvent('invoice.payment_failed', invoice));
    expect(await campaignRow(w.workspaceId, invoice.id)).toMatchObject({
      decline_code: 'expired_card',
      amount_cents: 9900,
      currency: 'eur',
      subscription_id: (await subscriptionRow(w.workspaceId, subscription.id)).id,
    });
    const call = w.stripe.requests.find(
      (request) => request.path === '/v1/invoice_payments' && request.query.get('invoice') === invoice.id,
    );
    expect(call?.query.getAll('expand[]') ?? call?.query.getAll('expand[0]')).toBeDefined();
    expect(
      [...call!.query.entries()].some(
        ([key, value]) => key.startsWith('expand') && value === 'data.payment.payment_intent',
      ),
    ).toBe(true);
  });

  it('still looks the decline code up with the stored key after `processor connect` again without --api-key', async () => {
    const w = await setUp();
    // The owner rotates only the signing secret: no --api-key, the key is kept.
    const rolled = newWebhookSecret();
    const again = await runCli(
      ['processor', 'connect', '--workspace', w.workspaceId, '--provider', 'stripe', '--webhook-secret', rolled],
      { DATABASE_URL: world.current.databaseUrl, STRIPE_API_BASE: w.stripe.url },
    );
    expect(again.code).toBe(0);
    expect(again.json).toMatchObject({ status: 'connected', api_key_last4: w.stripe.apiKey.slice(-4) });

    const customer = stripeCustomer();
    const invoice = legacyInvoice(customer, 'sub_KeptKey');
    w.stripe.paymentIntents.set(
      invoice.payment_intent,
      paymentIntent(invoice.payment_intent, 'card_velocity_exceeded'),
    );
    const event = stripeEvent('invoice.payment_failed', invoice);
    // Each API process rereads the connection within a second: the rolled secret verifies then.
    await eventually(async () => (await postToConnection(w.url, event, rolled)).status === 200, 5_000, 100);
    const campaign = await eventually(async () => {
      const row = await campaignRow(w.workspaceId, invoice.id);
      return row ?? null;
    }, 15_000);
    expect(campaign).toMatchObject({ decline_code: 'card_velocity_exceeded' });
    expect(
      w.stripe.requests.some(
        (request) =>
          request.path === `/v1/payment_intents/${invoice.payment_intent}` &&
          request.authorization === `Bearer ${w.stripe.apiKey}`,
      ),
    ).toBe(true);
  });

  it('opens with decline code unknown without a key, creating the customer and subscription the invoice names', async () => {
    const w = await setUp({ withKey: false });
    const customer = stripeCustomer();
    const invoice = legacyInvoice(customer, 'sub_NotYetSeen');
    await w.deliver(stripeEvent('invoice.payment_failed', invoice));
    expect(await campaignRow(w.workspaceId, invoice.id)).toMatchObject({
      decline_code: 'unknown',
      decline_category: 'unknown',
    });
    expect(await customerRow(w.workspaceId, customer.id)).toMatchObject({ email: customer.email });
    expect(await subscriptionRow(w.workspaceId, 'sub_NotYetSeen')).toMatchObject({
      status: 'past_due',
      amount_cents: 4900,
    });
    expect((await w.webhooks(1))[0]!.type).toBe('recovery.opened');
  });

  it('failed, retried by Stripe and paid: recovery.opened, then recovery.recovered via retry', async () => {
    const w = await setUp();
    const { customer, subscription } = await subscribedCustomer(w);
    const invoice = legacyInvoice(customer, subscription.id);
    w.stripe.paymentIntents.set(invoice.payment_intent, paymentIntent(invoice.payment_intent, 'insufficient_funds'));
    await w.deliver(failed(invoice, ago(300)));
    await w.deliver(stripeEvent('invoice.payment_failed', { ...invoice, attempt_count: 2 }, { created: ago(200) }));
    await w.deliver(
      stripeEvent(
        'invoice.paid',
        { ...invoice, status: 'paid', paid: true, attempt_count: 3, amount_remaining: 0 },
        { created: ago(100) },
      ),
    );
    const hooks = await w.webhooks(2);
    expect(hooks.map((hook) => hook.type)).toEqual(['recovery.opened', 'recovery.recovered']);
    expect(hooks[1]!.data).toMatchObject({
      recovered_via: 'retry',
      amount_cents: 4900,
      customer_email: customer.email,
    });
    expect(await campaignRow(w.workspaceId, invoice.id)).toMatchObject({ status: 'recovered', recovered_via: 'retry' });
  });

  it('a card change between the failure and the payment makes it customer_update', async () => {
    const w = await setUp();
    const { customer, subscription } = await subscribedCustomer(w);
    const invoice = legacyInvoice(customer, subscription.id);
    await w.deliver(failed(invoice, ago(300)));
    await w.deliver(cardChanged(customer, 'pm_NewCard', ago(200)));
    await w.deliver(
      stripeEvent('invoice.payment_succeeded', { ...invoice, status: 'paid', attempt_count: 2 }, { created: ago(100) }),
    );
    const hooks = await w.webhooks(2);
    expect(hooks.map((hook) => [hook.type, hook.data.recovered_via])).toEqual([
      ['recovery.opened', undefined],
      ['recovery.recovered', 'customer_update'],
    ]);
  });

  it('paid on the hosted page with the same card (attempt_count unchanged), or out of band: spontaneous', async () => {
    const w = await setUp();
    const { customer, subscription } = await subscribedCustomer(w);
    const hosted = legacyInvoice(customer, subscription.id);
    const outOfBand = legacyInvoice(customer, subscription.id);
    for (const invoice of [hosted, outOfBand]) await w.deliver(failed(invoice, ago(300)));
    await w.deliver(paid(hosted, 1, ago(100)));
    await w.deliver(
      stripeEvent(
        'invoice.paid',
        { ...outOfBand, status: 'paid', attempt_count: 4, paid_out_of_band: true },
        { created: ago(100) },
      ),
    );
    expect((await campaignRow(w.workspaceId, hosted.id)).recovered_via).toBe('spontaneous');
    expect((await campaignRow(w.workspaceId, outOfBand.id)).recovered_via).toBe('spontaneous');
  });

  it('invoice.paid arriving before the invoice.payment_failed that came first opens and recovers the campaign, as in order', async () => {
    const w = await setUp();
    const { customer, subscription } = await subscribedCustomer(w);
    const invoice = legacyInvoice(customer, subscription.id);
    const failedAt = ago(200);
    const paidAt = ago(100);
    await w.deliver(paid(invoice, 2, paidAt));
    expect((await w.deliver(failed(invoice, failedAt))).state).toBe('applied');
    expect(await campaignRow(w.workspaceId, invoice.id)).toMatchObject({
      status: 'recovered',
      recovered_via: 'retry',
      first_failed_at: new Date(failedAt * 1000),
      recovered_at: new Date(paidAt * 1000),
    });
    const hooks = await w.webhooks(2);
    expect(hooks.map((hook) => [hook.type, hook.data.recovered_via])).toEqual([
      ['recovery.opened', undefined],
      ['recovery.recovered', 'retry'],
    ]);
  });

  it('a card change between a failure and a payment that arrived before it makes it customer_update; one after the payment does not', async () => {
    const w = await setUp();
    const { customer, subscription } = await subscribedCustomer(w);
    const changedBetween = legacyInvoice(customer, subscription.id);
    await w.deliver(paid(changedBetween, 2, ago(100)));
    await w.deliver(cardChanged(customer, 'pm_NewCard', ago(200)));
    await w.deliver(failed(changedBetween, ago(300)));
    expect((await campaignRow(w.workspaceId, changedBetween.id)).recovered_via).toBe('customer_update');

    const changedBefore = legacyInvoice(customer, subscription.id);
    await w.deliver(paid(changedBefore, 2, ago(250)));
    await w.deliver(failed(changedBefore, ago(260)));
    // The card changed at -200, after this invoice was paid at -250: Stripe's retry collected it.
    expect((await campaignRow(w.workspaceId, changedBefore.id)).recovered_via).toBe('retry');
  });

  it.each([
    ['invoice.marked_uncollectible', 'uncollectible'],
    ['invoice.voided', 'void'],
  ])(
    '%s arriving before the failure that came first opens the campaign and loses it as the processor',
    async (type, status) => {
      const w = await setUp();
      const { customer, subscription } = await subscribedCustomer(w);
      const invoice = legacyInvoice(customer, subscription.id);
      const closedAt = ago(100);
      await w.deliver(stripeEvent(type, { ...invoice, status }, { created: closedAt }));
      await w.deliver(stripeEvent('invoice.payment_failed', invoice, { created: closedAt - 200 }));
      expect(await campaignRow(w.workspaceId, invoice.id)).toMatchObject({
        status: 'lost',
        closed_at: new Date(closedAt * 1000),
      });
      const hooks = await w.webhooks(2);
      expect(hooks.map((hook) => hook.type)).toEqual(['recovery.opened', 'recovery.lost']);
      expect(hooks[1]!.data).not.toHaveProperty('reason');
    },
  );

  it('an invoice made uncollectible, then paid, then its first failure: lost, as in order (the first settlement after the failure decides)', async () => {
    const w = await setUp();
    const { customer, subscription } = await subscribedCustomer(w);
    const invoice = legacyInvoice(customer, subscription.id);
    await w.deliver(paid(invoice, 3, ago(100)));
    await w.deliver(
      stripeEvent('invoice.marked_uncollectible', { ...invoice, status: 'uncollectible' }, { created: ago(200) }),
    );
    await w.deliver(failed(invoice, ago(300)));
    expect(await campaignRow(w.workspaceId, invoice.id)).toMatchObject({ status: 'lost' });
  });

  it('a failure between a void mark and a later payment opens nothing when it arrives last, as in order', async () => {
    const w = await setUp();
    const { customer, subscription } = await subscribedCustomer(w);
    const invoice = legacyInvoice(customer, subscription.id);
    await w.deliver(
      stripeEvent('invoice.marked_uncollectible', { ...invoice, status: 'uncollectible' }, { created: ago(300) }),
    );
    await w.deliver(paid(invoice, 2, ago(100)));
    await w.deliver(failed(invoice, ago(200)));
    expect(await campaignRow(w.workspaceId, invoice.id)).toBeUndefined();
  });

  it.each([
    ['in order but the second card change before the payment', ['failed', 'card A', 'card B', 'paid']],
    ['the payment first', ['paid', 'card A', 'card B', 'failed']],
  ])(
    'a card change between the failure and the payment is customer_update though another follows the payment (%s)',
    async (_order, arrivals) => {
      const w = await setUp();
      const { customer, subscription } = await subscribedCustomer(w);
      const invoice = legacyInvoice(customer, subscription.id);
      // Happened: failed at -500, card A at -400, paid at -300 (the same attempt), card B at -100.
      const events = {
        failed: failed(invoice, ago(500)),
        'card A': cardChanged(customer, 'pm_A', ago(400)),
        paid: paid(invoice, 1, ago(300)),
        'card B': cardChanged(customer, 'pm_B', ago(100)),
      };
      for (const arrival of arrivals) await w.deliver(events[arrival as keyof typeof events]);
      expect(await campaignRow(w.workspaceId, invoice.id)).toMatchObject({
        status: 'recovered',
        recovered_via: 'customer_update',
      });
    },
  );

  it('a failure that happened after the invoice was paid (a payment tried on a settled invoice) opens nothing, whatever the order', async () => {
    const w = await setUp();
    const { customer, subscription } = await subscribedCustomer(w);
    const failedLater = legacyInvoice(customer, subscription.id);
    await w.deliver(paid(failedLater, 1, ago(300)));
    expect((await w.deliver(failed(failedLater, ago(100)))).state).toBe('applied');
    expect(await campaignRow(w.workspaceId, failedLater.id)).toBeUndefined();
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(world.current.receiver.requestsTo(w.endpointPath)).toHaveLength(0);
  });

  it.each([
    ['invoice.marked_uncollectible', 'uncollectible'],
    ['invoice.voided', 'void'],
  ])('%s loses the campaign as the processor (no reason, no source)', async (type, status) => {
    const w = await setUp();
    const { customer, subscription } = await subscribedCustomer(w);
    const invoice = legacyInvoice(customer, subscription.id);
    await w.deliver(stripeEvent('invoice.payment_failed', invoice, { created: ago(300) }));
    await w.deliver(stripeEvent(type, { ...invoice, status }, { created: ago(100) }));
    const hooks = await w.webhooks(2);
    expect(hooks[1]!.type).toBe('recovery.lost');
    expect(hooks[1]!.data).not.toHaveProperty('reason');
    expect(hooks[1]!.data).not.toHaveProperty('source');
    expect((await campaignRow(w.workspaceId, invoice.id)).status).toBe('lost');
  });

  it('customer.subscription.deleted for payment_failed loses the open campaigns of that subscription', async () => {
    const w = await setUp();
    const { customer, subscription } = await subscribedCustomer(w);
    const invoice = legacyInvoice(customer, subscription.id);
    await w.deliver(stripeEvent('invoice.payment_failed', invoice, { created: nowSeconds() - 300 }));
    await w.deliver(
      stripeEvent(
        'customer.subscription.deleted',
        {
          ...subscription,
          status: 'canceled',
          canceled_at: nowSeconds() - 100,
          cancellation_details: { reason: 'payment_failed', feedback: null, comment: null },
        },
        { created: nowSeconds() - 100 },
      ),
    );
    expect((await w.webhooks(2)).map((hook) => hook.type)).toEqual(['recovery.opened', 'recovery.lost']);
    expect((await subscriptionRow(w.workspaceId, subscription.id)).status).toBe('canceled');
    expect(await db()('cancel_sessions').where({ workspace_id: w.workspaceId })).toHaveLength(0);
  });

  it('customer.subscription.deleted for cancellation_requested records a canceled cancel session with the feedback', async () => {
    const w = await setUp();
    const { customer, subscription } = await subscribedCustomer(w);
    await w.deliver(
      stripeEvent(
        'customer.subscription.deleted',
        {
          ...subscription,
          status: 'canceled',
          canceled_at: nowSeconds() - 50,
          cancellation_details: {
            reason: 'cancellation_requested',
            feedback: 'too_expensive',
            comment: 'Cheaper elsewhere.\u0007',
          },
        },
        { created: nowSeconds() - 50 },
      ),
    );
    const [lost] = await w.webhooks(1);
    expect(lost).toMatchObject({
      type: 'cancel.lost',
      data: {
        outcome: 'canceled',
        reason_code: 'too_expensive',
        customer_email: customer.email,
        monthly_mrr_cents: 4900,
        currency: 'usd',
      },
    });
    expect(await db()('cancel_sessions').where({ workspace_id: w.workspaceId }).first()).toMatchObject({
      outcome: 'canceled',
      reason_code: 'too_expensive',
      feedback: 'Cheaper elsewhere.',
    });
    // No feedback given: `other`.
    const second = stripeSubscription(customer.id);
    await w.deliver(stripeEvent('customer.subscription.created', second, { created: nowSeconds() - 40 }));
    await w.deliver(
      stripeEvent(
        'customer.subscription.deleted',
        {
          ...second,
          status: 'canceled',
          cancellation_details: { reason: 'cancellation_requested', feedback: null, comment: null },
        },
        { created: nowSeconds() - 30 },
      ),
    );
    expect(
      await db()('cancel_sessions')
        .where({ workspace_id: w.workspaceId, subscription_id: (await subscriptionRow(w.workspaceId, second.id)).id })
        .first(),
    ).toMatchObject({
      reason_code: 'other',
      feedback: null,
    });
  });

  it('stores any other event and marks it ignored', async () => {
    const w = await setUp();
    const outcome = await w.deliver(stripeEvent('charge.refunded', { id: 'ch_1', object: 'charge' }));
    expect(outcome.state).toBe('ignored');
  });
});

describe('failures', () => {
  it('accepts and applies an event with a \\u0000 in a string (jsonb would refuse it): the control character does not reach the customer', async () => {
    const w = await setUp();
    const outcome = await w.deliver(stripeEvent('customer.created', stripeCustomer({ name: 'nul \u0000 here' })));
    expect(outcome).toMatchObject({ state: 'applied', last_error: null });
    const customer = await db()('customers').where({ workspace_id: w.workspaceId }).first();
    expect(customer.name).toMatch(/^nul\s+here$/);
  });

  it('applies a customer whose name and tags hold bidi controls and invisible format characters, each stored as a space; ZWJ stays', async () => {
    const w = await setUp();
    const customer = stripeCustomer({
      name: 'Mallory\u202eecilA\u2066x\u2069 \u180e\u{1d173}\u{e0001}\u{e0041}\u200bLee\u2028\u{1f468}\u200d\u{1f469}',
      metadata: { tags: 'vi\u200bp, \u202ebeta' },
    });
    const outcome = await w.deliver(stripeEvent('customer.created', customer));
    expect(outcome).toMatchObject({ state: 'applied', last_error: null });
    const row = await customerRow(w.workspaceId, customer.id);
    expect(row.name).toBe('Mallory ecilA x' + ' '.repeat(7) + 'Lee \u{1f468}\u200d\u{1f469}');
    expect(row.tags).toEqual(['vi p', 'beta']);
  });

  it('applies a customer whose name is Hangul fillers and a grapheme joiner alone (shown as nothing) with no name', async () => {
    const w = await setUp();
    const blank = stripeCustomer({ name: '\u3164\u115f\u034f\uffa0' });
    const filled = stripeCustomer({ name: 'Kim\u3164Lee' });
    for (const customer of [blank, filled]) {
      const outcome = await w.deliver(stripeEvent('customer.created', customer));
      expect(outcome).toMatchObject({ state: 'applied', last_error: null });
    }
    expect((await customerRow(w.workspaceId, blank.id)).name).toBeNull();
    expect((await customerRow(w.workspaceId, filled.id)).name).toBe('Kim Lee');
  });

  it('refuses a signed event nested deeper than 64 levels with 400, storing nothing, and stores and applies one at 64', async () => {
    const w = await setUp();
    const stored = async (eventId: string) =>
      (await db()('processor_events').where({ connection_id: w.connectionId, psp_event_id: eventId })).length;
    /**
     * A customer event whose data.object.x holds `arrays` nested arrays: event 1, data 2, object 3,
     * arrays 4 on.
     */
    const nested = (arrays: number) => {
      let x: unknown = [];
      for (let i = 1; i < arrays; i += 1) x = [x];
      return stripeEvent('customer.created', { ...stripeCustomer(), x });
    };
    const atLimit = nested(61);
    expect(await w.deliver(atLimit)).toMatchObject({ state: 'applied', last_error: null });
    expect(await customerRow(w.workspaceId, atLimit.data.object.id)).toBeDefined();
    const refusal = {
      type: 'invalid_param',
      message: 'The body is not a Stripe event: it nests objects and arrays more than 64 levels deep.',
    };
    const deeper = nested(62);
    expect(await postToConnection(w.url, deeper, w.secret)).toMatchObject({ status: 400, body: { error: refusal } });
    expect(await stored(deeper.id)).toBe(0);
    // 20,000 arrays (40 KB): Postgres's json parser ran out of stack on it, a 500 database_error.
    const deepest = stripeEvent('customer.created', { ...stripeCustomer(), x: 'DEEP' });
    const body = JSON.stringify(deepest).replace('"DEEP"', `${'['.repeat(20_000)}${']'.repeat(20_000)}`);
    const signature = Stripe.webhooks.generateTestHeaderString({ payload: body, secret: w.secret });
    expect(await postToConnection(w.url, deepest, w.secret, { body, signature })).toMatchObject({
      status: 400,
      body: { error: refusal },
    });
    expect(await stored(deepest.id)).toBe(0);
  });

  it('parks at once, as malformed, an event whose Stripe id holds a control character, saying which', async () => {
    const w = await setUp();
    const row = (id: string) =>
      db()('processor_events').where({ connection_id: w.connectionId, psp_event_id: id }).first();
    for (const id of ['cus_\u0000', 'cus_1\n2']) {
      const event = stripeEvent('customer.created', stripeCustomer({ id }));
      expect((await postToConnection(w.url, event, w.secret)).status).toBe(200);
      await eventually(async () => ((await row(event.id)).last_error ? true : null), 15_000);
      expect(await row(event.id)).toMatchObject({
        state: 'parked',
        attempts: 1,
        last_error: `The event is malformed: the Stripe id ${JSON.stringify(id)} holds a control character, which no Stripe id does.`,
      });
    }
  });

  it("parks an event the database refuses (a NUL in the customer's email), showing its owner the database's words, not our query", async () => {
    const w = await setUp();
    const event = stripeEvent('customer.created', stripeCustomer({ email: 'jenny\u0000@example.com' }));
    const reply = await postToConnection(w.url, event, w.secret);
    expect(reply.status).toBe(200);
    const row = () => db()('processor_events').where({ connection_id: w.connectionId, psp_event_id: event.id }).first();
    await eventually(async () => ((await row()).last_error ? true : null), 15_000);
    // Its last retry, now.
    await db()('processor_events')
      .where({ connection_id: w.connectionId, psp_event_id: event.id })
      .update({ attempts: 5, next_attempt_at: db().raw('now()') });
    await eventually(async () => ((await row()).state === 'parked' ? true : null), 15_000);
    const shown =
      'The database refused a value in this event: invalid byte sequence for encoding "UTF8": 0x00 (SQLSTATE 22021)';
    expect((await row()).last_error).toBe(shown);
    const status = await processorStatus(db(), 'https://x.test', w.workspaceId);
    expect(status.parked_events).toEqual([expect.objectContaining({ psp_event_id: event.id, last_error: shown })]);
    const cli = await runCli(['processor', 'status', '--workspace', w.workspaceId], {
      DATABASE_URL: world.current.databaseUrl,
    });
    expect(cli.stdout).toContain('invalid byte sequence for encoding');
    expect(cli.stdout).not.toMatch(/INSERT|processor_object_states/);
  });

  it('parks an event that cannot apply, shows its error in status, and applies the events behind it', async () => {
    const w = await setUp();
    const { customer, subscription } = await subscribedCustomer(w);
    const poison = legacyInvoice(customer, subscription.id, { amount_due: 10 ** 13, amount_remaining: 10 ** 13 });
    const parked = await w.deliver(stripeEvent('invoice.payment_failed', poison, { created: nowSeconds() - 90 }));
    expect(parked.state).toBe('parked');
    const healthy = legacyInvoice(customer, subscription.id);
    expect(
      (await w.deliver(stripeEvent('invoice.payment_failed', healthy, { created: nowSeconds() - 80 }))).state,
    ).toBe('applied');
    const status = await processorStatus(db(), 'https://x.test', w.workspaceId);
    expect(status.events_parked).toBe(1);
    const registry = createMetricsRegistry('worker');
    registerWorkerMetrics({
      registry,
      events: w.worker.handle.events,
      deliveryQueue: w.worker.handle.deliveryQueue,
      db: db(),
      logger: createLogger('worker', 'silent'),
    });
    const page = (await renderMetrics(registry)).body;
    expect(page).toMatch(/^processor_events\{state="parked",service="worker"\} [1-9]/m);
    expect(page).toMatch(/^processor_inbox_lag_seconds\{service="worker"\} 0$/m);
    expect(status.parked_events[0]).toMatchObject({
      type: 'invoice.payment_failed',
      last_error: expect.stringContaining('amount_cents'),
    });
  });

  it('retries an event whose lookup fails with back-off, and applies it once Stripe answers', async () => {
    const w = await setUp();
    const { customer, subscription } = await subscribedCustomer(w);
    const invoice = legacyInvoice(customer, subscription.id);
    w.stripe.paymentIntents.set(
      invoice.payment_intent,
      paymentIntent(invoice.payment_intent, 'card_velocity_exceeded'),
    );
    let failures = 0;
    w.stripe.override = (_request, url) =>
      url.pathname.startsWith('/v1/payment_intents/') && failures++ < 3
        ? {
            status: 500,
            body: { error: { type: 'api_error', message: 'boom' } },
            headers: { 'stripe-should-retry': 'true' },
          }
        : null;
    const outcome = await w.deliver(stripeEvent('invoice.payment_failed', invoice));
    w.stripe.override = null;
    expect(outcome.state).toBe('applied');
    const row = await db()('processor_events')
      .where({ connection_id: w.connectionId, type: 'invoice.payment_failed' })
      .first();
    expect(row.attempts).toBe(2);
    expect((await campaignRow(w.workspaceId, invoice.id)).decline_code).toBe('card_velocity_exceeded');
  }, 30_000);

  it('a key Stripe answers with 401 disconnects the processor, logs it, and the campaign opens with unknown', async () => {
    const w = await setUp();
    const { customer, subscription } = await subscribedCustomer(w);
    const invoice = legacyInvoice(customer, subscription.id);
    w.stripe.override = (_request, url) =>
      url.pathname.startsWith('/v1/payment_intents/')
        ? { status: 401, body: { error: { type: 'invalid_request_error', message: 'Expired API Key provided' } } }
        : null;
    await w.deliver(stripeEvent('invoice.payment_failed', invoice));
    w.stripe.override = null;
    expect((await campaignRow(w.workspaceId, invoice.id)).decline_code).toBe('unknown');
    const status = await processorStatus(db(), 'https://x.test', w.workspaceId);
    expect(status).toMatchObject({ status: 'disconnected', disconnected_reason: 'key_rejected' });
    expect((await db()('workspaces').where({ id: w.workspaceId }).first()).processor_status).toBe('disconnected');
    const log = await listSecurityEvents(db(), w.workspaceId);
    expect(log.data[0]).toMatchObject({ action: 'processor.key_rejected', actor: { type: 'processor' } });
  });
});

describe('examples/stripe-invoice-failed.ts (the README walk-through)', () => {
  it.each([
    ['pre-basil', '0'],
    ['basil', '1'],
  ])(
    'POSTs a signed %s invoice.payment_failed that opens a campaign and sends recovery.opened',
    async (_shape, basil) => {
      const w = await setUp({ withKey: false });
      const { stdout } = await promisify(execFile)(
        process.execPath,
        ['--import', 'tsx', path.join(REPO_ROOT, 'examples/stripe-invoice-failed.ts')],
        {
          cwd: REPO_ROOT,
          env: { ...process.env, CONNECTION_URL: w.url, WEBHOOK_SECRET: w.secret, AMOUNT: '2900', BASIL: basil },
        },
      );
      const printed = JSON.parse(stdout) as { status: number; invoice_id: string; customer_email: string };
      expect(printed.status).toBe(200);
      const campaign = await eventually(() => campaignRow(w.workspaceId, printed.invoice_id));
      expect(campaign).toMatchObject({ status: 'in_flight', amount_cents: 2900, decline_code: 'unknown' });
      const [opened] = await w.webhooks(1);
      expect(opened).toMatchObject({
        type: 'recovery.opened',
        data: { psp_invoice_id: printed.invoice_id, customer_email: printed.customer_email, amount_cents: 2900 },
      });
    },
  );
});
