import { describe, expect, it } from '@jest/globals';
import { listSecurityEvents, processorStatus } from '@retention/domain';
import { runCli } from '@retention/testkit';
import { useProcessorWorld, type ProcessorWorld } from './harness.js';
import {
  basilInvoice,
  legacyInvoice,
  nowSeconds,
  paymentIntent,
  stripeCustomer,
  stripeEvent,
  stripeSubscription,
  type StripeObject,
} from './stripe-kit.js';

/**
 * Events stored, answered 2xx and set aside with their reason (docs/processor.md, "Set aside"):
 * a connected account's (Stripe Connect), the other mode's than the connection's, and a
 * signup's first failed payment. None is applied, none is looked up with the key, none sends a
 * webhook; `processor status` counts them by reason. And the connection's mode: the key's, else
 * the first signed event's, switched by a key of the other mode only when confirmed.
 */

const { world, setUp } = useProcessorWorld();
const db = () => world.current.db;
const BASE_URL = 'https://retention.example';

const OTHER_ACCOUNT = 'acct_1OTHERxxxxxxxx';

type Event = ReturnType<typeof stripeEvent>;
/** The event as Stripe sends it to an endpoint listening to connected accounts. */
const fromConnectedAccount = (event: Event): Event => ({ ...event, account: OTHER_ACCOUNT }) as Event;
const inLiveMode = (event: Event): Event => ({ ...event, livemode: true });

const eventRow = (w: ProcessorWorld, eventId: string) =>
  db()('processor_events').where({ connection_id: w.connectionId, psp_event_id: eventId }).first();
const workspaceRows = (table: string, w: ProcessorWorld) => db()(table).where({ workspace_id: w.workspaceId });
const statusOf = (w: ProcessorWorld) => processorStatus(db(), BASE_URL, w.workspaceId);
const lookupsOf = (w: ProcessorWorld, paymentIntentId: string) =>
  w.stripe.requests.filter((request) => request.path.includes(paymentIntentId));

/** A failed renewal of the account's own (test-mode) subscription, with a decline the key can learn. */
function ownFailure(w: ProcessorWorld) {
  const customer = stripeCustomer();
  const invoice = legacyInvoice(customer, `sub_own${nowSeconds()}`);
  w.stripe.paymentIntents.set(invoice.payment_intent, paymentIntent(invoice.payment_intent, 'insufficient_funds'));
  return { customer, invoice, event: stripeEvent('invoice.payment_failed', invoice) };
}

/** Delivers the events and expects each set aside with `reason`. */
async function expectSetAside(w: ProcessorWorld, events: Array<{ id: string }>, reason: string) {
  for (const event of events) {
    expect(await w.deliver(event)).toMatchObject({ state: 'ignored', last_error: null });
    expect((await eventRow(w, event.id)).ignored_reason).toBe(reason);
  }
}

describe("a connected account's events (Stripe Connect: `account` on the event)", () => {
  it('are stored and set aside: nothing applied, nothing looked up with the key, no webhook, counted by reason', async () => {
    const w = await setUp();
    const customer = stripeCustomer();
    const subscription = stripeSubscription(customer.id);
    const invoice = legacyInvoice(customer, subscription.id, { id: 'in_acctX' });
    w.stripe.paymentIntents.set(invoice.payment_intent, paymentIntent(invoice.payment_intent, 'stolen_card'));
    await expectSetAside(
      w,
      [
        fromConnectedAccount(stripeEvent('customer.created', customer)),
        fromConnectedAccount(stripeEvent('customer.subscription.created', subscription)),
        fromConnectedAccount(stripeEvent('invoice.payment_failed', invoice)),
      ],
      'connected_account',
    );
    expect(await workspaceRows('customers', w)).toEqual([]);
    expect(await workspaceRows('subscriptions', w)).toEqual([]);
    expect(await workspaceRows('recovery_campaigns', w)).toEqual([]);
    expect(lookupsOf(w, invoice.payment_intent)).toEqual([]);

    // The account's own failure is applied as ever, and its webhook is the only one recorded and sent.
    const own = ownFailure(w);
    expect((await w.deliver(own.event)).state).toBe('applied');
    const hooks = await w.webhooks(1);
    expect(hooks.map((hook) => [hook.type, hook.data.psp_invoice_id])).toEqual([['recovery.opened', own.invoice.id]]);
    expect((await workspaceRows('events', w)).map((event) => event.type)).toEqual(['recovery.opened']);
    expect(await statusOf(w)).toMatchObject({
      mode: 'test',
      events_set_aside: { connected_account: 3, other_mode: 0, signup_payment: 0 },
    });
  });
});

describe("the connection's mode", () => {
  it("is the key's: an event of the other mode is set aside, not applied, not looked up, no webhook", async () => {
    const w = await setUp(); // an rk_test_ key
    const live = ownFailure(w);
    const liveEvent = inLiveMode(stripeEvent('invoice.payment_failed', { ...live.invoice, livemode: true }));
    await expectSetAside(w, [liveEvent], 'other_mode');
    expect(await workspaceRows('recovery_campaigns', w)).toEqual([]);
    expect(lookupsOf(w, live.invoice.payment_intent)).toEqual([]);

    const test = ownFailure(w);
    expect((await w.deliver(test.event)).state).toBe('applied');
    expect((await w.webhooks(1)).map((hook) => hook.data.psp_invoice_id)).toEqual([test.invoice.id]);
    expect(await statusOf(w)).toMatchObject({
      mode: 'test',
      events_set_aside: { connected_account: 0, other_mode: 1, signup_payment: 0 },
    });
  });

  it("without a key, is fixed by the first signed event of the account's own: live, then a test event is set aside", async () => {
    const w = await setUp({ withKey: false });
    expect((await statusOf(w)).mode).toBeNull();
    // A connected account's event fixes nothing: it is not this account's.
    await expectSetAside(
      w,
      [fromConnectedAccount(stripeEvent('customer.created', stripeCustomer()))],
      'connected_account',
    );
    expect((await statusOf(w)).mode).toBeNull();
    const customer = stripeCustomer({ livemode: true });
    expect((await w.deliver(inLiveMode(stripeEvent('customer.created', customer)))).state).toBe('applied');
    expect((await statusOf(w)).mode).toBe('live');
    const testCustomer = stripeCustomer();
    await expectSetAside(w, [stripeEvent('customer.created', testCustomer)], 'other_mode');
    expect((await workspaceRows('customers', w)).map((row) => row.psp_customer_id)).toEqual([customer.id]);
  });

  it('switches to a key of the other mode only when confirmed (CLI), logged; the old mode is set aside after', async () => {
    const w = await setUp(); // test mode, from its rk_test_ key
    const liveKey = `rk_live_${'L'.repeat(20)}5678`;
    // The stand-in answers the live key's checks (one item of each list) as Stripe would.
    w.stripe.override = (request, url) =>
      request.headers.authorization === `Bearer ${liveKey}`
        ? { status: 200, body: { object: 'list', data: [], has_more: false, url: url.pathname } }
        : null;
    const connect = (...extra: string[]) =>
      runCli(
        [
          'processor',
          'connect',
          '--workspace',
          w.workspaceId,
          '--provider',
          'stripe',
          '--webhook-secret',
          w.secret,
          '--api-key',
          liveKey,
          ...extra,
        ],
        { DATABASE_URL: world.current.databaseUrl, BASE_URL, STRIPE_API_BASE: w.stripe.url },
      );
    // What a connect changes (the backfill its first connect queued runs meanwhile).
    const saved = () =>
      db()('processor_connections')
        .where({ id: w.connectionId })
        .first('mode', 'status', 'api_key_sealed', 'api_key_last4', 'webhook_secret_sealed', 'updated_at');
    const before = await saved();

    const refused = await connect();
    expect(refused.code).toBe(1);
    expect(refused.error).toEqual({
      type: 'conflict',
      message: expect.stringMatching(
        /^api_key: this is a live mode key and the connection is in test mode; nothing was saved\. .*the data already imported in test mode stays in the workspace/,
      ),
    });
    expect(refused.stderr).not.toContain(liveKey);
    expect(await saved()).toEqual(before);

    const switched = await connect('--confirm-mode-switch');
    expect(switched.code).toBe(0);
    expect(switched.json).toMatchObject({ mode: 'live', api_key_last4: '5678', status: 'connected' });
    const log = await listSecurityEvents(db(), w.workspaceId);
    // Written in the connect's transaction, beside its processor.connected.
    expect(log.data.filter((entry) => entry.action === 'processor.mode_switched')).toEqual([
      expect.objectContaining({
        details: { provider: 'stripe', from: 'test', to: 'live', api_key_last4: '5678' },
      }),
    ]);
    expect(JSON.stringify(log)).not.toContain(liveKey);

    // From then on the test mode's events are the other mode's.
    await expectSetAside(w, [stripeEvent('customer.created', stripeCustomer())], 'other_mode');
    w.stripe.override = null;
  });
});

describe("a signup's first failed payment (`billing_reason: subscription_create`)", () => {
  it.each([
    ['before basil', legacyInvoice],
    ['from basil on', basilInvoice],
  ] as const)('opens no campaign and sends nothing (%s): set aside as signup_payment', async (_shape, invoiceOf) => {
    const w = await setUp();
    const customer = stripeCustomer();
    const subscription = stripeSubscription(customer.id, { status: 'incomplete' });
    const invoice: StripeObject = invoiceOf(customer, subscription.id, { billing_reason: 'subscription_create' });
    if (invoice.payment_intent) {
      w.stripe.paymentIntents.set(invoice.payment_intent, paymentIntent(invoice.payment_intent, 'card_declined'));
    }
    await expectSetAside(w, [stripeEvent('invoice.payment_failed', invoice)], 'signup_payment');
    expect(await workspaceRows('recovery_campaigns', w)).toEqual([]);
    expect(w.stripe.requests.filter((request) => request.query.get('invoice') === invoice.id)).toEqual([]);
    expect(invoice.payment_intent ? lookupsOf(w, invoice.payment_intent) : []).toEqual([]);

    // A renewal's failure of the same subscription is a recovery, as ever.
    const renewal = invoiceOf(customer, subscription.id, { billing_reason: 'subscription_cycle' });
    expect((await w.deliver(stripeEvent('invoice.payment_failed', renewal))).state).toBe('applied');
    expect((await workspaceRows('recovery_campaigns', w)).map((row) => row.psp_invoice_id)).toEqual([renewal.id]);
    expect((await workspaceRows('events', w)).map((event) => event.type)).toEqual(['recovery.opened']);
    expect((await statusOf(w)).events_set_aside).toEqual({ connected_account: 0, other_mode: 0, signup_payment: 1 });
  });
});
