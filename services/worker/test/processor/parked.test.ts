import { describe, expect, it } from '@jest/globals';
import { listSecurityEvents, processorStatus } from '@retention/domain';
import { eventually, runCli } from '@retention/testkit';
import { useProcessorWorld, type ProcessorWorld } from './harness.js';
import {
  legacyInvoice,
  paymentIntent,
  postToConnection,
  stripeCustomer,
  stripeEvent,
  stripeSubscription,
} from './stripe-kit.js';

/**
 * Events that could not be applied (docs/processor.md, "Poison events"): what went wrong is in
 * the status in words, and a parked event can be tried again, by Stripe's "Resend" of the
 * same event or by `processor retry` (logged). Real API, worker, PostgreSQL and CLI.
 */
const processor = useProcessorWorld();
const db = () => processor.world.current.db;

const cli = (args: string[]) =>
  runCli(args, { DATABASE_URL: processor.world.current.databaseUrl, STRIPE_API_BASE: processor.stripe.url });

const eventRow = (w: ProcessorWorld, id: string) =>
  db()('processor_events').where({ connection_id: w.connectionId, psp_event_id: id }).first();

/** An event as it is after its last failed attempt: stored, parked, with its error. */
async function parkedEvent(w: ProcessorWorld, event: ReturnType<typeof stripeEvent>) {
  await db()('processor_events').insert({
    connection_id: w.connectionId,
    workspace_id: w.workspaceId,
    psp_event_id: event.id,
    type: event.type,
    psp_created_at: new Date(event.created * 1000),
    payload: JSON.stringify(event),
    state: 'parked',
    attempts: 6,
    last_error:
      'The database failed while applying this event: canceling statement due to statement timeout (SQLSTATE 57014)',
  });
}

describe('parked events', () => {
  it('are applied again when Stripe resends them; a resent event that was applied stays applied once', async () => {
    const w = await processor.setUp();
    const applied = stripeEvent('customer.created', stripeCustomer());
    expect(await w.deliver(applied)).toMatchObject({ state: 'applied' });
    expect(await postToConnection(w.url, applied, w.secret)).toMatchObject({
      status: 200,
      body: { received: true, duplicate: true },
    });
    await new Promise((resolve) => setTimeout(resolve, 700));
    expect(await eventRow(w, applied.id)).toMatchObject({ state: 'applied', attempts: 1 });

    const customer = stripeCustomer();
    const stuck = stripeEvent('customer.created', customer);
    await parkedEvent(w, stuck);
    expect((await processorStatus(db(), 'https://x.test', w.workspaceId)).latest_event_error).toMatchObject({
      psp_event_id: stuck.id,
      state: 'parked',
      attempts: 6,
      next_attempt_at: null,
    });
    // Stripe's "Resend" of the same event: a new round of attempts.
    expect(await postToConnection(w.url, stuck, w.secret)).toMatchObject({
      status: 200,
      body: { received: true, duplicate: false },
    });
    await eventually(async () => ((await eventRow(w, stuck.id)).state === 'applied' ? true : null), 15_000);
    expect(await eventRow(w, stuck.id)).toMatchObject({ attempts: 1, last_error: null });
    expect(await db()('customers').where({ workspace_id: w.workspaceId, psp_customer_id: customer.id })).toHaveLength(
      1,
    );
    expect((await processorStatus(db(), 'https://x.test', w.workspaceId)).latest_event_error).toBeNull();
  });

  it('are retried by `processor retry`, all or one, logged; nothing parked is a conflict in words', async () => {
    const w = await processor.setUp();
    const customers = [stripeCustomer(), stripeCustomer(), stripeCustomer()];
    const events = customers.map((customer) => stripeEvent('customer.created', customer));
    for (const event of events) await parkedEvent(w, event);

    const bad = await cli(['processor', 'retry', '--workspace', w.workspaceId, '--event', 'not an id']);
    expect(bad.code).not.toBe(0);
    expect(bad.error).toEqual({
      type: 'invalid_param',
      message: 'event: must be a Stripe event id (evt_…), as the status lists it',
    });

    const one = await cli(['processor', 'retry', '--workspace', w.workspaceId, '--event', events[0]!.id]);
    expect(one.json).toMatchObject({ retried: [events[0]!.id] });
    await eventually(async () => ((await eventRow(w, events[0]!.id)).state === 'applied' ? true : null), 15_000);
    expect((await eventRow(w, events[1]!.id)).state).toBe('parked');

    const all = await cli(['processor', 'retry', '--workspace', w.workspaceId]);
    expect([...all.json.retried].sort()).toEqual([events[1]!.id, events[2]!.id].sort());
    await eventually(
      async () =>
        (await db()('processor_events').where({ connection_id: w.connectionId, state: 'applied' })).length === 3
          ? true
          : null,
      15_000,
    );
    expect(await db()('customers').where({ workspace_id: w.workspaceId })).toHaveLength(3);

    const nothing = await cli(['processor', 'retry', '--workspace', w.workspaceId]);
    expect(nothing.error).toEqual({ type: 'conflict', message: 'No event is parked, so there is nothing to retry' });
    const log = (await listSecurityEvents(db(), w.workspaceId)).data.filter(
      (entry) => entry.action === 'processor.events_retried',
    );
    expect(log.map((entry) => [entry.actor.type, entry.details.count]).reverse()).toEqual([
      ['operator', 1],
      ['operator', 2],
    ]);
  }, 120_000);

  it('shows a permission the key lacks, met while looking a decline code up, in words in `processor status`', async () => {
    const w = await processor.setUp();
    const customer = stripeCustomer();
    const subscription = stripeSubscription(customer.id);
    const invoice = legacyInvoice(customer, subscription.id);
    w.stripe.paymentIntents.set(invoice.payment_intent, paymentIntent(invoice.payment_intent, 'insufficient_funds'));
    let refuse = true;
    w.stripe.override = (_request, url) =>
      refuse && url.pathname.startsWith('/v1/payment_intents/')
        ? {
            status: 403,
            body: {
              error: {
                type: 'invalid_request_error',
                message:
                  "The provided key 'rk_test_*********abcd' does not have the required permissions for this endpoint on account 'acct_1Test'. Having the 'rak_payment_intent_read' permission would allow this request to continue.",
              },
            },
          }
        : null;
    try {
      const failed = stripeEvent('invoice.payment_failed', invoice);
      expect((await postToConnection(w.url, failed, w.secret)).status).toBe(200);
      const status = await eventually(async () => {
        const shown = await cli(['processor', 'status', '--workspace', w.workspaceId]);
        return shown.json?.latest_event_error ? shown.json : null;
      }, 15_000);
      expect(status.latest_event_error).toMatchObject({
        psp_event_id: failed.id,
        type: 'invoice.payment_failed',
        state: 'waiting',
        next_attempt_at: expect.any(String),
      });
      expect(status.latest_event_error.error).toMatch(
        /^Stripe refused the API key a permission, so the decline code could not be looked up \(Stripe said: The provided key .* 'rak_payment_intent_read' permission would allow this request to continue\.\)\. In Stripe, edit the restricted key/,
      );
      expect(status.latest_event_error.error).not.toMatch(/Error:/);

      // The owner gives the key the permission: the next attempt learns the decline code.
      refuse = false;
      await eventually(async () => ((await eventRow(w, failed.id)).state === 'applied' ? true : null), 20_000);
      expect(
        await db()('recovery_campaigns').where({ workspace_id: w.workspaceId, psp_invoice_id: invoice.id }).first(),
      ).toMatchObject({ decline_code: 'insufficient_funds' });
      expect((await processorStatus(db(), 'https://x.test', w.workspaceId)).latest_event_error).toBeNull();
    } finally {
      w.stripe.override = null;
    }
  }, 60_000);
});
