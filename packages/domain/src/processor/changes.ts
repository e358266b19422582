import { CANCEL_REASON_CODES, CONTROL_CHARACTER_BUT_TAB_AND_LINE_BREAKS, isOneOf } from '@retention/core';
import type { CampaignRow, CustomerRow, SubscriptionRow, Transaction } from '@retention/db';
import { noteNextAttempt, recordFailedAttempt } from '../campaigns/attempts.js';
import { loseCampaign, recoverCampaign } from '../campaigns/close.js';
import { openCampaign } from '../campaigns/open.js';
import { recordCancelSession } from '../cancel-sessions.js';
import { sendTrialReminder } from '../trial-reminders.js';
import { recordWinback } from '../winbacks.js';
import { upsertCustomer, upsertSubscription } from './mirror.js';
import { withoutInvisibleCharacters } from '../validate.js';

/**
 * What a processor event means, in our words. An adapter (packages/processors) turns its
 * processor's event into a list of these; `applyProcessorChanges` carries them out through
 * the domain actions, in the transaction that marks the event applied. Nothing here knows
 * Stripe: another processor fits by producing the same changes.
 *
 * Ordering: every change carries the processor's time of the event (`at`). Per processor
 * object, the newest time applied is kept (processor_object_states): an older update never
 * overwrites a newer one, and an invoice once paid, voided or uncollectible is never left with
 * an open campaign: a failure that arrives after the settlement it preceded opens the campaign
 * and closes it as the settlement did (applyInvoiceFailed), so the order of arrival changes
 * neither the KPIs nor the webhooks.
 *
 * Times: what a change records (a campaign opened, recovered or lost, a cancel session, a
 * win-back, a trial reminder, and the webhook event each emits) happened when the processor
 * says it did, not when we applied it: the processor redelivers for days and our worker may be
 * behind, and the KPIs and receivers' ordering read these times. A change names the object's
 * own time of its transition when the processor has one (`happened_at`); else the event's time
 * counts. See `happenedAt` for the bounds.
 */

export interface CustomerFacts {
  psp_customer_id: string;
  /** Null when the processor has none: a placeholder address is stored (docs/processor.md). */
  email: string | null;
  name: string | null;
  tags: string[];
  created_at: Date;
}

/** A subscription as the processor describes it: our row's fields, keyed by the processor's ids. */
export type SubscriptionFacts = Omit<SubscriptionRow, 'id' | 'workspace_id' | 'customer_id'> & {
  psp_customer_id: string;
};

export type ProcessorChange =
  | { kind: 'customer'; customer: CustomerFacts }
  | {
      kind: 'subscription';
      subscription: SubscriptionFacts;
      /** `created`: a new subscription, which may be a win-back. */
      created: boolean;
    }
  | { kind: 'trial_will_end'; subscription: SubscriptionFacts }
  | { kind: 'payment_method_changed'; psp_customer_id: string }
  | {
      kind: 'invoice_failed';
      psp_invoice_id: string;
      customer: CustomerFacts;
      /** What we know of the subscription; used only when we have not mirrored it yet. */
      subscription: SubscriptionFacts;
      amount_cents: number;
      currency: string;
      decline_code: string;
      /** The processor's count of the invoice's payment attempts, this failed one included. */
      attempt_count: number;
      /** When the processor will try again, as the invoice says; null when no retry is scheduled. */
      next_payment_attempt: Date | null;
    }
  | {
      kind: 'invoice_paid';
      psp_invoice_id: string;
      attempt_count: number;
      paid_out_of_band: boolean;
      /** When the invoice was paid, when the processor says; else the event's time counts. */
      happened_at: Date | null;
    }
  | {
      kind: 'invoice_closed';
      psp_invoice_id: string;
      status: 'uncollectible' | 'void';
      /** When it was voided or marked uncollectible, when the processor says. */
      happened_at: Date | null;
    }
  | {
      kind: 'subscription_deleted';
      /** `canceled_at` is when the customer (or the processor) canceled it: a cancel session's time. */
      subscription: SubscriptionFacts;
      /** When the subscription ended, when the processor says: its open campaigns are lost then. */
      ended_at: Date | null;
      reason: 'payment_failed' | 'cancellation_requested' | 'other';
      feedback: string | null;
      comment: string | null;
    };

export interface ApplyContext {
  trx: Transaction;
  connection_id: string;
  workspace_id: string;
  /** The processor's time of the event. */
  at: Date;
  /** A backfill imports history: no webhook event goes out for it (like `fixtures load`). */
  silent?: boolean;
}

export interface ApplyResult {
  /** True when some change did something; false when every change was stale or a no-op. */
  changed: boolean;
}

const PLACEHOLDER_EMAIL_DOMAIN = 'no-email.invalid';

export async function applyProcessorChanges(context: ApplyContext, changes: ProcessorChange[]): Promise<ApplyResult> {
  let changed = false;
  for (const change of changes) {
    if (await applyChange(context, change)) changed = true;
  }
  return { changed };
}

function applyChange(context: ApplyContext, change: ProcessorChange): Promise<boolean> {
  switch (change.kind) {
    case 'customer':
      return applyCustomer(context, change.customer);
    case 'subscription':
      return applySubscription(context, change.subscription, change.created);
    case 'trial_will_end':
      return applyTrialWillEnd(context, change.subscription);
    case 'payment_method_changed':
      return applyPaymentMethodChanged(context, change.psp_customer_id);
    case 'invoice_failed':
      return applyInvoiceFailed(context, change);
    case 'invoice_paid':
      return applyInvoicePaid(context, change);
    case 'invoice_closed':
      return applyInvoiceClosed(context, change);
    case 'subscription_deleted':
      return applySubscriptionDeleted(context, change);
  }
}

type ObjectType = 'customer' | 'subscription' | 'invoice';
interface ObjectState {
  connection_id: string;
  object_type: ObjectType;
  psp_object_id: string;
  last_created_at: Date;
  state: Record<string, unknown>;
}

/**
 * Locks (creating it when new) the ordering state of one processor object until commit. One
 * statement: the upsert's DO UPDATE (which changes nothing) takes the row lock of an existing
 * row, waiting for a concurrent writer of the same object as SELECT ... FOR UPDATE would.
 */
async function lockObject(context: ApplyContext, type: ObjectType, id: string): Promise<ObjectState | null> {
  const { rows } = await context.trx.raw<{ rows: ObjectState[] }>(
    `INSERT INTO processor_object_states (connection_id, object_type, psp_object_id, last_created_at)
     VALUES (?, ?, ?, ?)
     ON CONFLICT (connection_id, object_type, psp_object_id)
     DO UPDATE SET last_created_at = processor_object_states.last_created_at
     RETURNING *`,
    [context.connection_id, type, id, new Date(0)],
  );
  return rows[0] ?? null;
}

async function saveObject(
  context: ApplyContext,
  type: ObjectType,
  id: string,
  patch: Record<string, unknown>,
  advance = true,
): Promise<void> {
  await context
    .trx('processor_object_states')
    .where({ connection_id: context.connection_id, object_type: type, psp_object_id: id })
    .update({
      state: context.trx.raw('state || ?::jsonb', [JSON.stringify(patch)]),
      ...(advance && { last_created_at: context.trx.raw('greatest(last_created_at, ?)', [context.at]) }),
    });
}

/**
 * When a change happened: the processor's time of the transition (`reported`, else the
 * event's), never in the future (a processor clock ahead of ours, or a bad timestamp, must not
 * date our rows and webhooks ahead of now) and never before `notBefore`, the object's earlier
 * state (a recovery reported before its campaign's first failure happened at that failure).
 * The event's time (`context.at`) is left as it is for ordering, which compares the
 * processor's times among themselves.
 */
function happenedAt(context: Pick<ApplyContext, 'at'>, reported: Date | null, notBefore?: Date): Date {
  const time = Math.min((reported ?? context.at).getTime(), Date.now());
  return new Date(notBefore === undefined ? time : Math.max(time, notBefore.getTime()));
}

/** True when an event of this time is not older than the newest one applied to the object. */
function isCurrent(state: ObjectState | null, at: Date): boolean {
  return state === null || state.last_created_at.getTime() <= at.getTime();
}

function emailOf(customer: Pick<CustomerFacts, 'email' | 'psp_customer_id'>): string {
  const email = customer.email?.trim();
  if (email && /^[^@\s]+@[^@\s]+$/.test(email) && email.length <= 320) return email;
  return `${customer.psp_customer_id.replace(/[^A-Za-z0-9_.-]/g, '_')}@${PLACEHOLDER_EMAIL_DOMAIN}`;
}

/**
 * The customer's name as we store it. The customer chose it, so a control or invisible
 * character in it (an override that shows it reversed in the dashboard) becomes a space rather
 * than refusing the event, which must still apply. Nothing left to see: no name.
 */
function customerName(name: string | null): string | null {
  const visible = name === null ? '' : withoutInvisibleCharacters(name).trim();
  return visible ? visible.slice(0, 500) : null;
}

function customerInput(context: ApplyContext, customer: CustomerFacts) {
  return {
    workspace_id: context.workspace_id,
    psp_customer_id: customer.psp_customer_id,
    email: emailOf(customer),
    name: customerName(customer.name),
    tags: customer.tags.map((tag) => withoutInvisibleCharacters(tag).slice(0, 100)).slice(0, 100),
    created_at: customer.created_at,
  };
}

async function applyCustomer(context: ApplyContext, customer: CustomerFacts): Promise<boolean> {
  const state = await lockObject(context, 'customer', customer.psp_customer_id);
  if (!isCurrent(state, context.at)) return false;
  await upsertCustomer(context.trx, customerInput(context, customer));
  await saveObject(context, 'customer', customer.psp_customer_id, { mirrored: true });
  return true;
}

/**
 * The customer a subscription or an invoice names. One we have not heard of yet (its
 * `customer.created` is late, or came before the connection) is created from what the event
 * says, without taking the object's time: the customer's own events still apply in full.
 */
async function ensureCustomer(context: ApplyContext, customer: CustomerFacts): Promise<CustomerRow> {
  const existing = await context
    .trx<CustomerRow>('customers')
    .where({ workspace_id: context.workspace_id, psp_customer_id: customer.psp_customer_id })
    .first();
  if (existing) return existing;
  return upsertCustomer(context.trx, customerInput(context, customer));
}

function subscriptionInput(customerId: string, context: ApplyContext, subscription: SubscriptionFacts) {
  return {
    workspace_id: context.workspace_id,
    customer_id: customerId,
    psp_subscription_id: subscription.psp_subscription_id,
    status: subscription.status,
    plan_name: subscription.plan_name.slice(0, 500) || 'Subscription',
    amount_cents: subscription.amount_cents,
    currency: subscription.currency,
    interval: subscription.interval,
    trial_end: subscription.trial_end,
    current_period_end: subscription.current_period_end,
    canceled_at: subscription.canceled_at,
    created_at: subscription.created_at,
  };
}

const bareCustomer = (pspCustomerId: string, at: Date): CustomerFacts => ({
  psp_customer_id: pspCustomerId,
  email: null,
  name: null,
  tags: [],
  created_at: at,
});

async function applySubscription(
  context: ApplyContext,
  subscription: SubscriptionFacts,
  created: boolean,
): Promise<boolean> {
  const state = await lockObject(context, 'subscription', subscription.psp_subscription_id);
  if (!isCurrent(state, context.at)) return false;
  const customer = await ensureCustomer(context, bareCustomer(subscription.psp_customer_id, context.at));
  const existing = await context
    .trx<SubscriptionRow>('subscriptions')
    .where({ workspace_id: context.workspace_id, psp_subscription_id: subscription.psp_subscription_id })
    .first();
  const written = await upsertSubscription(context.trx, subscriptionInput(customer.id, context, subscription));
  await saveObject(context, 'subscription', subscription.psp_subscription_id, { mirrored: true });
  if (created && !existing && !context.silent && subscription.status !== 'canceled') {
    await recordWinbackIfReturning(context, customer, written);
  }
  return true;
}

/** A new subscription of a customer whose last subscription was canceled is a win-back. */
async function recordWinbackIfReturning(
  context: ApplyContext,
  customer: CustomerRow,
  subscription: SubscriptionRow,
): Promise<void> {
  const previous: Array<Pick<SubscriptionRow, 'status' | 'canceled_at'>> = await context
    .trx<SubscriptionRow>('subscriptions')
    .where({ workspace_id: context.workspace_id, customer_id: customer.id })
    .whereNot({ id: subscription.id })
    .select('status', 'canceled_at');
  if (previous.length === 0 || previous.some((row) => row.status !== 'canceled')) return;
  const lastCanceledAt = Math.max(...previous.map((row) => row.canceled_at?.getTime() ?? 0));
  if (lastCanceledAt === 0) return;
  const daysAway = Math.max(0, Math.floor((subscription.created_at.getTime() - lastCanceledAt) / 86_400_000));
  await recordWinback(context.trx, {
    // The customer came back when the new subscription was created, never before they left.
    at: happenedAt(context, subscription.created_at, new Date(lastCanceledAt)),
    customer_id: customer.id,
    workspace_id: context.workspace_id,
    psp_subscription_id: subscription.psp_subscription_id,
    days_away: daysAway,
    amount_cents: subscription.amount_cents,
    currency: subscription.currency,
  });
}

async function applyTrialWillEnd(context: ApplyContext, subscription: SubscriptionFacts): Promise<boolean> {
  await applySubscription(context, subscription, false);
  const row = await context
    .trx<SubscriptionRow>('subscriptions')
    .where({ workspace_id: context.workspace_id, psp_subscription_id: subscription.psp_subscription_id })
    .first();
  if (!row || row.status !== 'trialing' || row.trial_end === null || row.trial_end.getTime() <= Date.now()) {
    return false; // the trial already ended or the subscription moved on: nothing to remind of
  }
  await sendTrialReminder(context.trx, {
    subscription_id: row.id,
    workspace_id: context.workspace_id,
    at: happenedAt(context, null),
  });
  return true;
}

/** How many of a customer's payment-method changes are kept: the newest, enough for any invoice's retries. */
const KEPT_PAYMENT_METHOD_CHANGES = 20;

/**
 * The times (the events' `created`, ms) at which the customer changed their payment method,
 * oldest first. A list, not the latest alone: a change after a payment must not hide the one
 * between the failure and that payment, whatever order their events arrive in. A state written
 * before the list was kept has the latest time alone (`payment_method_changed_at`).
 */
function paymentMethodChanges(state: ObjectState | null | undefined): number[] {
  const kept = state?.state.payment_method_changes;
  if (Array.isArray(kept)) return kept.map(Number);
  const latest = Number(state?.state.payment_method_changed_at ?? 0);
  return latest > 0 ? [latest] : [];
}

async function applyPaymentMethodChanged(context: ApplyContext, pspCustomerId: string): Promise<boolean> {
  const state = await lockObject(context, 'customer', pspCustomerId);
  const changes = paymentMethodChanges(state);
  const at = context.at.getTime();
  if (changes.includes(at)) return false;
  const kept = [...changes, at].sort((a, b) => a - b).slice(-KEPT_PAYMENT_METHOD_CHANGES);
  await saveObject(context, 'customer', pspCustomerId, { payment_method_changes: kept }, false);
  return true;
}

const TERMINAL_INVOICE_STATES = ['paid', 'void', 'uncollectible'];

/**
 * How an invoice was settled, kept on its ordering state (processor_object_states.state) so a
 * failure that arrives after the settlement can still be told what happened next: `paid_*`
 * from `invoice.paid`, `closed_*` from `invoice.voided` or `.marked_uncollectible`. Times are
 * milliseconds; `*_event_at` is the settling event's `created`, which ordering compares.
 */
interface InvoiceSettlement {
  outcome: 'paid' | 'closed';
  /** The settling event's `created`. */
  event_at: number;
  /** When it was paid, voided or made uncollectible, as the processor says. */
  happened_at: number;
  attempt_count: number;
  paid_out_of_band: boolean;
}

/**
 * The `paid_*` or `closed_*` fields of a settling event, when it is the earliest of its kind
 * applied to the invoice (Stripe sends `invoice.paid` and `invoice.payment_succeeded` for one
 * payment; a void may follow uncollectible); nothing when an earlier one is kept already.
 */
function earliestSettlement(
  state: ObjectState | null,
  kind: 'paid' | 'closed',
  eventAt: Date,
  reported: Date | null,
  facts: Record<string, unknown> = {},
): Record<string, unknown> {
  const kept = state?.state[`${kind}_event_at`];
  if (typeof kept === 'number' && kept <= eventAt.getTime()) return {};
  return {
    [`${kind}_event_at`]: eventAt.getTime(),
    [`${kind}_at`]: happenedAt({ at: eventAt }, reported).getTime(),
    ...facts,
  };
}

/**
 * The settlement a failure of time `failedEventAt` would have met first, had the events come in
 * order: the earliest, when every settlement kept is at or after the failure. Null when any
 * came before it (in order, the failure found the invoice settled and opened nothing: a
 * payment tried on a voided invoice that was later paid stays nothing), or when the invoice was
 * settled by events stored before settlements were kept (a status and no times).
 */
function firstSettlementAfter(state: ObjectState | null, failedEventAt: number): InvoiceSettlement | null {
  const facts = state?.state ?? {};
  const settlements: InvoiceSettlement[] = [];
  if (typeof facts.paid_event_at === 'number') {
    settlements.push({
      outcome: 'paid',
      event_at: facts.paid_event_at,
      happened_at: Number(facts.paid_at ?? facts.paid_event_at),
      attempt_count: Number(facts.paid_attempt_count ?? 0),
      paid_out_of_band: facts.paid_out_of_band === true,
    });
  }
  if (typeof facts.closed_event_at === 'number') {
    settlements.push({
      outcome: 'closed',
      event_at: facts.closed_event_at,
      happened_at: Number(facts.closed_at ?? facts.closed_event_at),
      attempt_count: 0,
      paid_out_of_band: false,
    });
  }
  settlements.sort((a, b) => a.event_at - b.event_at);
  const first = settlements[0];
  return first !== undefined && first.event_at >= failedEventAt ? first : null;
}

async function applyInvoiceFailed(
  context: ApplyContext,
  change: Extract<ProcessorChange, { kind: 'invoice_failed' }>,
): Promise<boolean> {
  const state = await lockObject(context, 'invoice', change.psp_invoice_id);
  // Settled before this failure arrived: a failure that happened before the settlement opens
  // the campaign and closes it as the settlement did, so the KPIs and webhooks are what they
  // would have been in order; a failure after it (a payment tried on a closed invoice) is
  // nothing new, as in order.
  const settledLater = TERMINAL_INVOICE_STATES.includes(String(state?.state.status))
    ? firstSettlementAfter(state, context.at.getTime())
    : undefined;
  if (settledLater === null) return false;
  const customer = await ensureCustomer(context, change.customer);
  let subscription = await context
    .trx<SubscriptionRow>('subscriptions')
    .where({ workspace_id: context.workspace_id, psp_subscription_id: change.subscription.psp_subscription_id })
    .first();
  subscription ??= await upsertSubscription(context.trx, subscriptionInput(customer.id, context, change.subscription));
  // Stripe's invoice records no time for a failure: the event's time is the failure's.
  const failedAt = happenedAt(context, null);
  const opened = await openCampaign(context.trx, {
    workspace_id: context.workspace_id,
    customer_id: customer.id,
    subscription_id: subscription.id,
    psp_invoice_id: change.psp_invoice_id,
    amount_cents: change.amount_cents,
    currency: change.currency,
    decline_code: change.decline_code,
    failed_at: failedAt,
    at: failedAt,
    silent: context.silent ?? false,
  });
  const failure = {
    psp_customer_id: change.customer.psp_customer_id,
    failed_at: Math.max(Number(state?.state.failed_at ?? 0), context.at.getTime()),
    // The earliest failure; a backfill's import (silent, at the invoice's finalisation) is no
    // failure time and never moves it earlier.
    first_failed_at: context.silent
      ? Number(state?.state.first_failed_at ?? context.at.getTime())
      : Math.min(Number(state?.state.first_failed_at ?? Infinity), context.at.getTime()),
    failed_attempt_count: Math.max(Number(state?.state.failed_attempt_count ?? 0), change.attempt_count),
  };
  await recordAttempt(context, opened.id, change, failedAt);
  if (settledLater === undefined) {
    if (!opened.created && !context.silent) await moveFirstFailureBack(context.trx, opened.id, failedAt);
    await saveObject(context, 'invoice', change.psp_invoice_id, { status: 'failed', ...failure });
    return opened.created;
  }
  await saveObject(context, 'invoice', change.psp_invoice_id, failure, false);
  if (opened.created) {
    await settleLate(context, { id: opened.id, first_failed_at: failedAt }, failure, settledLater);
  }
  return opened.created;
}

/** Stripe counts an invoice's attempts from 1; a count outside this is no attempt we can number. */
const MAX_ATTEMPT_NUMBER = 10_000;

/**
 * The failed attempt an `invoice_failed` reports, on its campaign (open, or closed by a settlement
 * that came after it), and the invoice's next attempt when no newer event said otherwise
 * (campaigns/attempts.ts). A backfill's import (silent) knows the invoice's attempt count and
 * next attempt but not when each attempt failed: it records no attempt, only the next one.
 */
async function recordAttempt(
  context: ApplyContext,
  campaignId: string,
  change: Extract<ProcessorChange, { kind: 'invoice_failed' }>,
  failedAt: Date,
): Promise<void> {
  const numbered = Number.isInteger(change.attempt_count) && change.attempt_count >= 1;
  const attemptCount = numbered ? Math.min(change.attempt_count, MAX_ATTEMPT_NUMBER) : 1;
  if (!context.silent && numbered && change.attempt_count <= MAX_ATTEMPT_NUMBER) {
    await recordFailedAttempt(context.trx, {
      workspace_id: context.workspace_id,
      campaign_id: campaignId,
      attempt_number: change.attempt_count,
      failed_at: failedAt,
      decline_code: change.decline_code,
    });
  }
  await noteNextAttempt(context.trx, {
    workspace_id: context.workspace_id,
    campaign_id: campaignId,
    next_attempt_at: change.next_payment_attempt,
    as_of: context.at,
    attempt_count: attemptCount,
  });
}

/**
 * A failure that arrives after a later one of the same invoice, while its campaign is still
 * open, is the campaign's first failure (walk M5): its `first_failed_at` (and `created_at`, the
 * time it opened) move back to it. The day rollups follow, their triggers moving the campaign
 * from one day to the other. The `recovery.opened` already sent stays as it was sent (with the
 * later time); the campaign read through the API says the earlier one. A closed campaign is
 * final and keeps its times (docs/processor.md, "Order").
 */
async function moveFirstFailureBack(trx: Transaction, campaignId: string, failedAt: Date): Promise<void> {
  await trx('recovery_campaigns')
    .where({ id: campaignId, status: 'in_flight' })
    .where('first_failed_at', '>', failedAt)
    .update({ first_failed_at: failedAt, created_at: trx.raw('least(created_at, ?::timestamptz)', [failedAt]) });
}

/** Closes a campaign opened by a late failure as the invoice's later settlement did. */
async function settleLate(
  context: ApplyContext,
  campaign: { id: string; first_failed_at: Date },
  failure: { psp_customer_id: string; first_failed_at: number; failed_attempt_count: number },
  settlement: InvoiceSettlement,
): Promise<void> {
  const at = happenedAt(context, new Date(settlement.happened_at), campaign.first_failed_at);
  if (settlement.outcome === 'closed') {
    await loseCampaign(context.trx, { id: campaign.id, workspace_id: context.workspace_id, by: 'processor', at });
    return;
  }
  await recoverCampaign(context.trx, {
    id: campaign.id,
    workspace_id: context.workspace_id,
    via: await recoveredVia(context, { ...failure, paid_event_at: settlement.event_at }, settlement),
    at,
  });
}

async function openCampaignOf(context: ApplyContext, pspInvoiceId: string): Promise<CampaignRow | undefined> {
  return context
    .trx<CampaignRow>('recovery_campaigns')
    .where({ workspace_id: context.workspace_id, psp_invoice_id: pspInvoiceId, status: 'in_flight' })
    .first();
}

async function applyInvoicePaid(
  context: ApplyContext,
  change: Extract<ProcessorChange, { kind: 'invoice_paid' }>,
): Promise<boolean> {
  const state = await lockObject(context, 'invoice', change.psp_invoice_id);
  await saveObject(context, 'invoice', change.psp_invoice_id, {
    status: 'paid',
    ...earliestSettlement(state, 'paid', context.at, change.happened_at, {
      paid_attempt_count: change.attempt_count,
      paid_out_of_band: change.paid_out_of_band,
    }),
  });
  const campaign = await openCampaignOf(context, change.psp_invoice_id);
  if (!campaign) return false;
  const pspCustomerId =
    (state?.state.psp_customer_id as string | undefined) ??
    (await context.trx<CustomerRow>('customers').where({ id: campaign.customer_id }).first())?.psp_customer_id;
  const failure = {
    psp_customer_id: pspCustomerId,
    first_failed_at: Number(state?.state.first_failed_at ?? campaign.first_failed_at.getTime()),
    failed_attempt_count: Number(state?.state.failed_attempt_count ?? 1),
    paid_event_at: context.at.getTime(),
  };
  await recoverCampaign(context.trx, {
    id: campaign.id,
    workspace_id: context.workspace_id,
    via: await recoveredVia(context, failure, change),
    at: happenedAt(context, change.happened_at, campaign.first_failed_at),
  });
  return true;
}

/**
 * How the processor collected a failed invoice (docs/processor.md): paid out of band is
 * `spontaneous`; a payment method changed after the first failure and no later than the
 * payment is `customer_update`; a payment counted by the retry schedule (Stripe's
 * `attempt_count` grew past the failures we saw) is `retry`; anything else (the customer paid
 * on the hosted page with the same method) is `spontaneous`. Times are the events' `created`.
 */
async function recoveredVia(
  context: ApplyContext,
  failure: {
    psp_customer_id: string | undefined;
    first_failed_at: number;
    failed_attempt_count: number;
    paid_event_at: number;
  },
  payment: { attempt_count: number; paid_out_of_band: boolean },
): Promise<'retry' | 'customer_update' | 'spontaneous'> {
  if (payment.paid_out_of_band) return 'spontaneous';
  if (failure.psp_customer_id !== undefined) {
    const customerState = await context
      .trx<ObjectState>('processor_object_states')
      .where({ connection_id: context.connection_id, object_type: 'customer', psp_object_id: failure.psp_customer_id })
      .first();
    const changedBetween = paymentMethodChanges(customerState).some(
      (changedAt) => changedAt > failure.first_failed_at && changedAt <= failure.paid_event_at,
    );
    if (changedBetween) return 'customer_update';
  }
  return payment.attempt_count > failure.failed_attempt_count ? 'retry' : 'spontaneous';
}

async function applyInvoiceClosed(
  context: ApplyContext,
  change: Extract<ProcessorChange, { kind: 'invoice_closed' }>,
): Promise<boolean> {
  const state = await lockObject(context, 'invoice', change.psp_invoice_id);
  const closed = earliestSettlement(state, 'closed', context.at, change.happened_at);
  // An uncollectible invoice can still be paid later; a paid one is never uncollectible again.
  // The close is still kept: a failure older than both may yet arrive, and it met the close first.
  if (state?.state.status === 'paid') {
    await saveObject(context, 'invoice', change.psp_invoice_id, closed, false);
    return false;
  }
  await saveObject(context, 'invoice', change.psp_invoice_id, { status: change.status, ...closed });
  const campaign = await openCampaignOf(context, change.psp_invoice_id);
  if (!campaign) return false;
  await loseCampaign(context.trx, {
    id: campaign.id,
    workspace_id: context.workspace_id,
    by: 'processor',
    at: happenedAt(context, change.happened_at, campaign.first_failed_at),
  });
  return true;
}

async function applySubscriptionDeleted(
  context: ApplyContext,
  change: Extract<ProcessorChange, { kind: 'subscription_deleted' }>,
): Promise<boolean> {
  await applySubscription(context, change.subscription, false);
  const subscription = await context
    .trx<SubscriptionRow>('subscriptions')
    .where({ workspace_id: context.workspace_id, psp_subscription_id: change.subscription.psp_subscription_id })
    .first();
  if (!subscription) return false;
  if (change.reason === 'payment_failed') {
    const open = await context
      .trx<CampaignRow>('recovery_campaigns')
      .where({ workspace_id: context.workspace_id, subscription_id: subscription.id, status: 'in_flight' })
      .orderBy('first_failed_at')
      .select('id', 'first_failed_at');
    for (const campaign of open) {
      await loseCampaign(context.trx, {
        id: campaign.id,
        workspace_id: context.workspace_id,
        by: 'processor',
        at: happenedAt(context, change.ended_at, campaign.first_failed_at),
      });
    }
    return open.length > 0;
  }
  if (change.reason === 'cancellation_requested' && !context.silent) {
    await recordCancelSession(context.trx, {
      workspace_id: context.workspace_id,
      customer_id: subscription.customer_id,
      subscription_id: subscription.id,
      outcome: 'canceled',
      reason_code: isOneOf(CANCEL_REASON_CODES, change.feedback) ? change.feedback : 'other',
      monthly_mrr_cents: monthlyAmount(subscription),
      currency: subscription.currency,
      ...(cleanComment(change.comment) !== null && { feedback: cleanComment(change.comment)! }),
      at: happenedAt(context, change.subscription.canceled_at),
    });
    return true;
  }
  return false;
}

function monthlyAmount(subscription: Pick<SubscriptionRow, 'amount_cents' | 'interval'>): number {
  return subscription.interval === 'year' ? Math.round(subscription.amount_cents / 12) : subscription.amount_cents;
}

const CONTROL_CHARACTERS_IN_A_COMMENT = new RegExp(CONTROL_CHARACTER_BUT_TAB_AND_LINE_BREAKS, 'g');

/** The customer's comment, without the control characters a cancel session refuses. */
function cleanComment(comment: string | null): string | null {
  const clean = comment?.replace(CONTROL_CHARACTERS_IN_A_COMMENT, ' ').trim().slice(0, 5000);
  return clean ? clean : null;
}
