import { describe, expect, it } from '@jest/globals';
import { eventually } from '@retention/testkit';
import { subscribedCustomer as customerSince, useProcessorWorld, type ProcessorWorld } from './harness.js';
import {
  basilInvoice,
  invoicePayment,
  legacyInvoice,
  nowSeconds,
  paymentIntent,
  stripeCustomer,
  stripeEvent,
  stripeSubscription,
  type StripeObject,
} from './stripe-kit.js';

/**
 * Each failed payment attempt of a campaign's invoice, as Stripe reports it
 * (`invoice.payment_failed` again with a growing `attempt_count`), and the invoice's
 * `next_payment_attempt` on the campaign (docs/processor.md, "Payment attempts"): both invoice
 * shapes, out of order, redelivered.
 */

const processor = useProcessorWorld();
const { world, setUp } = processor;
const db = () => world.current.db;

const ago = (seconds: number) => nowSeconds() - seconds;
const DAY = 86_400;

/** A subscribed customer of 40 days ago (harness.ts). */
const subscribedCustomer = (w: ProcessorWorld) => customerSince(w, ago(40 * DAY));

/** The `attempt`-th failure of the invoice, made at `created`, Stripe saying it tries again at `next` (or never). */
const failure = (invoice: StripeObject, attempt: number, created: number, next: number | null) =>
  stripeEvent(
    'invoice.payment_failed',
    { ...invoice, attempt_count: attempt, next_payment_attempt: next },
    { created },
  );

const campaignOf = (workspaceId: string, invoiceId: string) =>
  db()('recovery_campaigns').where({ workspace_id: workspaceId, psp_invoice_id: invoiceId }).first();

async function attemptsOf(workspaceId: string, invoiceId: string) {
  const campaign = await campaignOf(workspaceId, invoiceId);
  return db()('campaign_payment_attempts')
    .where({ campaign_id: campaign.id, workspace_id: workspaceId })
    .orderBy('attempt_number')
    .select('attempt_number', 'failed_at', 'decline_code', 'decline_category');
}

const at = (seconds: number) => new Date(seconds * 1000);

describe('payment attempts', () => {
  it('records each failed attempt with its decline code and keeps the next attempt, then none once paid by a retry (pre-basil)', async () => {
    const w = await setUp();
    const { customer, subscription } = await subscribedCustomer(w);
    const invoice = legacyInvoice(customer, subscription.id);
    const intent = invoice.payment_intent as string;
    const [t1, t2, t3] = [ago(20 * DAY), ago(17 * DAY), ago(12 * DAY)];
    w.stripe.paymentIntents.set(intent, paymentIntent(intent, 'insufficient_funds'));
    await w.deliver(failure(invoice, 1, t1, t1 + 3 * DAY));
    expect(await campaignOf(w.workspaceId, invoice.id)).toMatchObject({
      next_payment_attempt_at: at(t1 + 3 * DAY),
      next_payment_attempt_as_of: at(t1),
    });
    w.stripe.paymentIntents.set(intent, paymentIntent(intent, 'do_not_honor'));
    await w.deliver(failure(invoice, 2, t2, t2 + 5 * DAY));
    w.stripe.paymentIntents.set(intent, paymentIntent(intent, 'insufficient_funds'));
    await w.deliver(failure(invoice, 3, t3, t3 + 7 * DAY));
    expect(await attemptsOf(w.workspaceId, invoice.id)).toEqual([
      { attempt_number: 1, failed_at: at(t1), decline_code: 'insufficient_funds', decline_category: 'soft' },
      { attempt_number: 2, failed_at: at(t2), decline_code: 'do_not_honor', decline_category: 'soft' },
      { attempt_number: 3, failed_at: at(t3), decline_code: 'insufficient_funds', decline_category: 'soft' },
    ]);
    expect((await campaignOf(w.workspaceId, invoice.id)).next_payment_attempt_at).toEqual(at(t3 + 7 * DAY));
    await w.deliver(
      stripeEvent(
        'invoice.paid',
        { ...invoice, status: 'paid', attempt_count: 4, next_payment_attempt: null, amount_remaining: 0 },
        { created: ago(5 * DAY) },
      ),
    );
    expect(await campaignOf(w.workspaceId, invoice.id)).toMatchObject({ status: 'recovered', recovered_via: 'retry' });
    // The public API's campaign and the webhooks are as they were: nothing of the attempts.
    const hooks = await w.webhooks(2);
    expect(hooks.map((hook) => hook.type)).toEqual(['recovery.opened', 'recovery.recovered']);
    for (const hook of hooks) expect(Object.keys(hook.data).some((key) => /attempt/.test(key))).toBe(false);
  });

  it('reads the basil shape: the attempt count and next attempt on the invoice, the decline code from InvoicePayments', async () => {
    const w = await setUp();
    const { customer, subscription } = await subscribedCustomer(w);
    const invoice = basilInvoice(customer, subscription.id);
    w.stripe.invoicePayments.set(invoice.id, [invoicePayment(invoice, 'expired_card')]);
    const failedAt = ago(2 * DAY);
    await w.deliver(failure(invoice, 2, failedAt, null));
    expect(await attemptsOf(w.workspaceId, invoice.id)).toEqual([
      {
        attempt_number: 2,
        failed_at: at(failedAt),
        decline_code: 'expired_card',
        decline_category: 'card_update_required',
      },
    ]);
    // Stripe scheduled no retry: known, and none.
    expect(await campaignOf(w.workspaceId, invoice.id)).toMatchObject({
      next_payment_attempt_at: null,
      next_payment_attempt_as_of: at(failedAt),
    });
  });

  it('out of order: every attempt is kept once, and the next attempt is the newest event’s, whatever came last', async () => {
    const w = await setUp();
    const { customer, subscription } = await subscribedCustomer(w);
    const invoice = legacyInvoice(customer, subscription.id);
    const [t1, t2, t3] = [ago(20 * DAY), ago(17 * DAY), ago(12 * DAY)];
    // The last retry (no more scheduled) arrives first, then the earlier two, one of them twice.
    await w.deliver(failure(invoice, 3, t3, null));
    const second = failure(invoice, 2, t2, t2 + 5 * DAY);
    await w.deliver(second);
    await w.deliver(failure(invoice, 1, t1, t1 + 3 * DAY));
    await w.deliver(second);
    expect((await attemptsOf(w.workspaceId, invoice.id)).map((row) => [row.attempt_number, row.failed_at])).toEqual([
      [1, at(t1)],
      [2, at(t2)],
      [3, at(t3)],
    ]);
    expect(await campaignOf(w.workspaceId, invoice.id)).toMatchObject({
      status: 'in_flight',
      first_failed_at: at(t1),
      next_payment_attempt_at: null,
      next_payment_attempt_as_of: at(t3),
    });
    const stored = await db()('processor_events').where({ connection_id: w.connectionId, psp_event_id: second.id });
    expect(stored).toHaveLength(1);
  });

  it('two events of the same attempt keep the earlier; two of the same second keep the one that counted more attempts', async () => {
    const w = await setUp();
    const { customer, subscription } = await subscribedCustomer(w);
    const invoice = legacyInvoice(customer, subscription.id);
    const t = ago(3 * DAY);
    await w.deliver(failure(invoice, 1, t, t + DAY));
    // Attempt 2 reported twice (another event, later), the later report first.
    await w.deliver(failure(invoice, 2, t + 60, t + 2 * DAY));
    await w.deliver(failure(invoice, 2, t + 30, t + 2 * DAY));
    // Attempt 3 and a stale report of attempt 2 in the same second: attempt 3 is the newer fact.
    await w.deliver(failure(invoice, 3, t + 3600, null));
    await w.deliver(failure(invoice, 2, t + 3600, t + 2 * DAY));
    expect((await attemptsOf(w.workspaceId, invoice.id)).map((row) => [row.attempt_number, row.failed_at])).toEqual([
      [1, at(t)],
      [2, at(t + 30)],
      [3, at(t + 3600)],
    ]);
    expect(await campaignOf(w.workspaceId, invoice.id)).toMatchObject({
      next_payment_attempt_at: null,
      next_payment_attempt_count: 3,
    });
  });

  it('a failure that arrives after the payment it preceded is recorded on the recovered campaign', async () => {
    const w = await setUp();
    const { customer, subscription } = await subscribedCustomer(w);
    const invoice = legacyInvoice(customer, subscription.id);
    const [t1, t2, paidAt] = [ago(9 * DAY), ago(6 * DAY), ago(3 * DAY)];
    await w.deliver(failure(invoice, 1, t1, t1 + 3 * DAY));
    await w.deliver(stripeEvent('invoice.paid', { ...invoice, status: 'paid', attempt_count: 3 }, { created: paidAt }));
    expect((await w.deliver(failure(invoice, 2, t2, t2 + 3 * DAY))).state).toBe('applied');
    expect((await attemptsOf(w.workspaceId, invoice.id)).map((row) => row.attempt_number)).toEqual([1, 2]);
    expect((await campaignOf(w.workspaceId, invoice.id)).status).toBe('recovered');
  });

  it("a backfill imports an open invoice's next attempt, and no attempt (Stripe keeps no time for each); a later event is newer", async () => {
    const { stripe } = processor;
    const customer = stripeCustomer();
    const subscription = stripeSubscription(customer.id);
    const next = nowSeconds() + 2 * DAY;
    const finalized = ago(6 * DAY);
    const invoice = legacyInvoice(customer, subscription.id, {
      status: 'open',
      attempt_count: 2,
      next_payment_attempt: next,
      status_transitions: { finalized_at: finalized },
    });
    stripe.paymentIntents.set(invoice.payment_intent, paymentIntent(invoice.payment_intent, 'do_not_honor'));
    Object.assign(stripe, { customers: [customer], subscriptions: [subscription], invoices: [invoice] });
    try {
      const w = await setUp();
      const campaign = await eventually(() => campaignOf(w.workspaceId, invoice.id), 15_000);
      expect(campaign).toMatchObject({ next_payment_attempt_at: at(next), next_payment_attempt_as_of: at(finalized) });
      expect(await attemptsOf(w.workspaceId, invoice.id)).toEqual([]);
      await w.deliver(failure(invoice, 3, ago(60), null));
      expect(await campaignOf(w.workspaceId, invoice.id)).toMatchObject({ next_payment_attempt_at: null });
      expect((await attemptsOf(w.workspaceId, invoice.id)).map((row) => row.attempt_number)).toEqual([3]);
    } finally {
      Object.assign(stripe, { customers: [], subscriptions: [], invoices: [] });
    }
  });
});
