import { describe, expect, it } from '@jest/globals';
import { createToken } from '@retention/domain';
import { subscribedCustomer, useProcessorWorld, type ProcessorWorld } from './harness.js';
import { legacyInvoice, nowSeconds, stripeEvent, stripeSubscription, type StripeObject } from './stripe-kit.js';

/**
 * Stripe redelivers an event for up to three days and our worker may be behind: what an event
 * changes happened when Stripe says it did (docs/processor.md, "Times"), in our rows, in the
 * API's JSON, in the rollups the KPIs read, and in the `created_at` of the webhook it emits
 * (docs/webhooks.md). Events here arrive a day or two after they happened.
 */

const processor = useProcessorWorld();
const { world, setUp } = processor;
const db = () => world.current.db;

const DAY = 86_400;
const iso = (seconds: number) => new Date(seconds * 1000).toISOString();
const date = (seconds: number) => new Date(seconds * 1000);

const utcDay = (seconds: number) => date(seconds).toISOString().slice(0, 10);

/** The UTC days (as text) of a workspace's day rollup rows, with one more column. */
const dayRollup = (table: string, workspaceId: string, column: string) =>
  db()(table).where({ workspace_id: workspaceId }).select(db().raw('day::text AS day'), column);

const campaignRow = (workspaceId: string, invoiceId: string) =>
  db()('recovery_campaigns').where({ workspace_id: workspaceId, psp_invoice_id: invoiceId }).first();

/** GET on the public API with a token of the workspace. */
async function apiGet(w: ProcessorWorld, path: string): Promise<any> {
  const { token } = await createToken(db(), { workspace_id: w.workspaceId, name: 'times' });
  const response = await fetch(`${processor.api.url}/api/v1${path}`, { headers: { authorization: `Bearer ${token}` } });
  expect(response.status).toBe(200);
  return response.json();
}

const webhookOf = async (w: ProcessorWorld, count: number, type: string) =>
  (await w.webhookBodies(count)).find((body) => body.type === type);

describe('a change happens at the time Stripe says, not when the worker applied it', () => {
  it('failed two days ago, paid a day ago: the campaign, the API, the rollups and the webhooks say so', async () => {
    const w = await setUp();
    const { customer, subscription } = await subscribedCustomer(w);
    const invoice = legacyInvoice(customer, subscription.id, { created: nowSeconds() - 3 * DAY });
    const failedAt = nowSeconds() - 2 * DAY;
    const paidEventAt = nowSeconds() - DAY;
    // The invoice's own record of the payment, a little before Stripe wrote the event about it.
    const paidAt = paidEventAt - 30;
    await w.deliver(stripeEvent('invoice.payment_failed', invoice, { created: failedAt }));
    const paid = {
      ...invoice,
      status: 'paid',
      attempt_count: 2,
      amount_remaining: 0,
      status_transitions: { ...invoice.status_transitions, paid_at: paidAt },
    };
    expect((await w.deliver(stripeEvent('invoice.paid', paid, { created: paidEventAt }))).state).toBe('applied');

    const campaign = await campaignRow(w.workspaceId, invoice.id);
    expect(campaign).toMatchObject({
      status: 'recovered',
      first_failed_at: date(failedAt),
      created_at: date(failedAt),
      recovered_at: date(paidAt),
      closed_at: date(paidAt),
    });
    expect(await apiGet(w, `/campaigns/${campaign.id}`)).toMatchObject({
      first_failed_at: iso(failedAt),
      recovered_at: iso(paidAt),
      closed_at: iso(paidAt),
    });
    // The rollups behind the KPIs bucket by those times: opened on the failure's UTC day,
    // recovered in 23 whole hours (a day less 30 s), median 1.00 day.
    const stats = await apiGet(w, '/stats');
    expect(stats.recovery.median_days_to_recover).toBe(1);
    expect(await dayRollup('recovery_time_day_rollups', w.workspaceId, 'hours_to_recover')).toEqual([
      { day: utcDay(failedAt), hours_to_recover: 23 },
    ]);

    expect(await webhookOf(w, 2, 'recovery.opened')).toMatchObject({ created_at: iso(failedAt) });
    expect(await webhookOf(w, 2, 'recovery.recovered')).toMatchObject({ created_at: iso(paidAt) });
  });

  it('a failure arriving after a later one, its campaign still open, moves first_failed_at back, rollups too', async () => {
    const w = await setUp();
    const { customer, subscription } = await subscribedCustomer(w);
    const invoice = legacyInvoice(customer, subscription.id, { created: nowSeconds() - 5 * DAY });
    const firstAt = nowSeconds() - 4 * DAY;
    const secondAt = nowSeconds() - DAY;
    await w.deliver(stripeEvent('invoice.payment_failed', { ...invoice, attempt_count: 2 }, { created: secondAt }));
    expect((await campaignRow(w.workspaceId, invoice.id)).first_failed_at).toEqual(date(secondAt));
    await w.deliver(stripeEvent('invoice.payment_failed', { ...invoice, attempt_count: 1 }, { created: firstAt }));

    const campaign = await campaignRow(w.workspaceId, invoice.id);
    expect(campaign).toMatchObject({ status: 'in_flight', first_failed_at: date(firstAt), created_at: date(firstAt) });
    expect(await apiGet(w, `/campaigns/${campaign.id}`)).toMatchObject({ first_failed_at: iso(firstAt) });
    // The day rollups moved the campaign to the first failure's UTC day, counted once.
    const days = await dayRollup('campaign_day_rollups', w.workspaceId, 'campaigns');
    expect(days.filter((row) => Number(row.campaigns) !== 0).map((row) => [row.day, Number(row.campaigns)])).toEqual([
      [utcDay(firstAt), 1],
    ]);
    // The recovery.opened already sent stays as sent, once.
    expect((await w.webhookBodies(1)).map((body) => [body.type, body.created_at])).toEqual([
      ['recovery.opened', iso(secondAt)],
    ]);
  });

  it('an invoice without status_transitions is paid at the event time', async () => {
    const w = await setUp();
    const { customer, subscription } = await subscribedCustomer(w);
    const invoice = legacyInvoice(customer, subscription.id, { status_transitions: undefined });
    const failedAt = nowSeconds() - 2 * DAY;
    const paidAt = nowSeconds() - DAY;
    await w.deliver(stripeEvent('invoice.payment_failed', invoice, { created: failedAt }));
    await w.deliver(stripeEvent('invoice.paid', { ...invoice, status: 'paid' }, { created: paidAt }));
    expect(await campaignRow(w.workspaceId, invoice.id)).toMatchObject({ recovered_at: date(paidAt) });
    expect(await webhookOf(w, 2, 'recovery.recovered')).toMatchObject({ created_at: iso(paidAt) });
  });

  it('an event dated in the future happened now; a payment reported before the failure happened at the failure', async () => {
    const w = await setUp();
    const { customer, subscription } = await subscribedCustomer(w);
    const ahead = legacyInvoice(customer, subscription.id);
    const before = Date.now();
    expect((await w.deliver(stripeEvent('invoice.payment_failed', ahead, { created: nowSeconds() + DAY }))).state).toBe(
      'applied',
    );
    const after = Date.now();
    const opened = await campaignRow(w.workspaceId, ahead.id);
    expect(opened.first_failed_at.getTime()).toBeGreaterThanOrEqual(before - 1000);
    expect(opened.first_failed_at.getTime()).toBeLessThanOrEqual(after);
    expect(opened.created_at.getTime()).toBeLessThanOrEqual(after);
    const openedHook = await webhookOf(w, 1, 'recovery.opened');
    expect(Date.parse(openedHook!.created_at)).toBeLessThanOrEqual(after);
    expect(Date.parse(openedHook!.created_at)).toBeGreaterThanOrEqual(before - 1000);

    // Stripe's clocks and order are not ours to refuse: paid "before" it failed is paid as it failed.
    const early = legacyInvoice(customer, subscription.id);
    const failedAt = nowSeconds() - 3600;
    await w.deliver(stripeEvent('invoice.payment_failed', early, { created: failedAt }));
    const paidAt = failedAt - 600;
    await w.deliver(
      stripeEvent(
        'invoice.paid',
        { ...early, status: 'paid', status_transitions: { ...early.status_transitions, paid_at: paidAt } },
        { created: paidAt },
      ),
    );
    expect(await campaignRow(w.workspaceId, early.id)).toMatchObject({
      status: 'recovered',
      first_failed_at: date(failedAt),
      recovered_at: date(failedAt),
    });
  });

  it.each([
    ['invoice.voided', 'void', 'voided_at'],
    ['invoice.marked_uncollectible', 'uncollectible', 'marked_uncollectible_at'],
  ])('%s loses the campaign at the invoice status_transitions time', async (type, status, transition) => {
    const w = await setUp();
    const { customer, subscription } = await subscribedCustomer(w);
    const invoice = legacyInvoice(customer, subscription.id, { created: nowSeconds() - 3 * DAY });
    const failedAt = nowSeconds() - 2 * DAY;
    const closedAt = nowSeconds() - DAY;
    await w.deliver(stripeEvent('invoice.payment_failed', invoice, { created: failedAt }));
    await w.deliver(
      stripeEvent(
        type,
        { ...invoice, status, status_transitions: { ...invoice.status_transitions, [transition]: closedAt } },
        { created: closedAt + 5 },
      ),
    );
    expect(await campaignRow(w.workspaceId, invoice.id)).toMatchObject({ status: 'lost', closed_at: date(closedAt) });
    expect(await webhookOf(w, 2, 'recovery.lost')).toMatchObject({ created_at: iso(closedAt) });
  });

  it('a subscription ended for failed payments loses its campaigns when it ended', async () => {
    const w = await setUp();
    const { customer, subscription } = await subscribedCustomer(w);
    const invoice = legacyInvoice(customer, subscription.id, { created: nowSeconds() - 3 * DAY });
    const failedAt = nowSeconds() - 2 * DAY;
    const endedAt = nowSeconds() - DAY;
    await w.deliver(stripeEvent('invoice.payment_failed', invoice, { created: failedAt }));
    await w.deliver(
      stripeEvent(
        'customer.subscription.deleted',
        {
          ...subscription,
          status: 'canceled',
          canceled_at: endedAt,
          ended_at: endedAt,
          cancellation_details: { reason: 'payment_failed', feedback: null, comment: null },
        },
        { created: endedAt + 2 },
      ),
    );
    expect(await campaignRow(w.workspaceId, invoice.id)).toMatchObject({ status: 'lost', closed_at: date(endedAt) });
    expect(await webhookOf(w, 2, 'recovery.lost')).toMatchObject({ created_at: iso(endedAt) });
  });

  it('a cancellation the customer asked for is a cancel session at canceled_at, bucketed on that day', async () => {
    const w = await setUp();
    const { subscription } = await subscribedCustomer(w);
    // Canceled at the period's end: asked three days ago, ended (and the event written) a day ago.
    const canceledAt = nowSeconds() - 3 * DAY;
    const endedAt = nowSeconds() - DAY;
    await w.deliver(
      stripeEvent(
        'customer.subscription.deleted',
        {
          ...subscription,
          status: 'canceled',
          cancel_at_period_end: true,
          canceled_at: canceledAt,
          ended_at: endedAt,
          cancellation_details: { reason: 'cancellation_requested', feedback: 'unused', comment: null },
        },
        { created: endedAt },
      ),
    );
    const session = await db()('cancel_sessions').where({ workspace_id: w.workspaceId }).first();
    expect(session).toMatchObject({ created_at: date(canceledAt), ended_at: date(canceledAt) });
    expect((await apiGet(w, '/cancel_sessions')).data).toEqual([
      expect.objectContaining({ id: session.id, created_at: iso(canceledAt), ended_at: iso(canceledAt) }),
    ]);
    expect(await dayRollup('cancel_session_day_rollups', w.workspaceId, 'outcome')).toEqual([
      { day: utcDay(canceledAt), outcome: 'canceled' },
    ]);
    expect(await webhookOf(w, 1, 'cancel.lost')).toMatchObject({ created_at: iso(canceledAt) });
  });

  it('a win-back is recorded when the new subscription was created', async () => {
    const w = await setUp();
    const { customer, subscription } = await subscribedCustomer(w);
    const canceledAt = nowSeconds() - 12 * DAY;
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
        { created: canceledAt },
      ),
    );
    const createdAt = nowSeconds() - 2 * DAY;
    const back: StripeObject = stripeSubscription(customer.id, { created: createdAt });
    await w.deliver(stripeEvent('customer.subscription.created', back, { created: createdAt + 1 }));
    expect(await db()('winbacks').where({ workspace_id: w.workspaceId }).first()).toMatchObject({
      days_away: 10,
      recorded_at: date(createdAt),
    });
    expect(await webhookOf(w, 1, 'winback.recorded')).toMatchObject({ created_at: iso(createdAt) });
  });

  it('a trial reminder is sent at the time of Stripe’s notice', async () => {
    const w = await setUp();
    const { subscription } = await subscribedCustomer(w);
    const noticeAt = nowSeconds() - DAY;
    const trialing = { ...subscription, status: 'trialing', trial_end: nowSeconds() + 2 * DAY };
    await w.deliver(stripeEvent('customer.subscription.trial_will_end', trialing, { created: noticeAt }));
    expect(await db()('trial_reminders').where({ workspace_id: w.workspaceId }).first()).toMatchObject({
      sent_at: date(noticeAt),
    });
    expect(await webhookOf(w, 1, 'trial.reminder_sent')).toMatchObject({ created_at: iso(noticeAt) });
  });
});
