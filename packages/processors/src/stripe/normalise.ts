import type Stripe from 'stripe';
import type { ApplyOutcome, ProcessorChange } from '@retention/domain';
import { fromStripeAmount } from './amounts.js';
import { StripeKeyRejectedError } from './client.js';
import { declineCodeOfInvoice, UNKNOWN_DECLINE } from './decline-code.js';
import {
  customerFacts,
  idOf,
  int,
  invoiceSubscriptionId,
  isObject,
  str,
  subscriptionFacts,
  subscriptionFromInvoice,
  time,
  type StripeObject,
} from './objects.js';

/**
 * A Stripe event in our words (the table in docs/processor.md, row by row). Returns the
 * changes to apply, or null for an event we store and mark ignored. The adapter reads and
 * asks Stripe; it never writes: the domain applies the changes.
 */

export interface NormaliseContext {
  /** The library with the connection's key, or null without one. */
  stripe: Stripe | null;
  /** Stripe refused the key (401): the caller disconnects the connection and logs it. */
  onKeyRejected: () => Promise<void>;
  /** On the last attempt, a lookup that keeps failing gives `unknown` rather than parking the event. */
  lastAttempt: boolean;
}

export interface StripeEventEnvelope {
  id: string;
  type: string;
  created: number;
  data: { object: StripeObject; previous_attributes?: StripeObject };
}

/** The event types of the table; every other type is stored and marked ignored. */
export const HANDLED_EVENT_TYPES = [
  'customer.created',
  'customer.updated',
  'customer.subscription.created',
  'customer.subscription.updated',
  'customer.subscription.paused',
  'customer.subscription.resumed',
  'customer.subscription.trial_will_end',
  'customer.subscription.deleted',
  'invoice.payment_failed',
  'invoice.paid',
  'invoice.payment_succeeded',
  'invoice.marked_uncollectible',
  'invoice.voided',
  'payment_method.attached',
] as const;

/** An event stored and not applied, for a reason kept with it (docs/processor.md, "Set aside"). */
export type SetAside = Extract<ApplyOutcome, { set_aside: unknown }>;

export function isSetAside(changes: ProcessorChange[] | SetAside): changes is SetAside {
  return !Array.isArray(changes);
}

export async function stripeEventToChanges(
  event: StripeEventEnvelope,
  context: NormaliseContext,
): Promise<ProcessorChange[] | SetAside | null> {
  const object = event.data.object;
  const at = new Date(event.created * 1000);
  switch (event.type) {
    case 'customer.created':
    case 'customer.updated': {
      const customer = customerFacts(object, at);
      if (!customer) return null;
      const changes: ProcessorChange[] = [{ kind: 'customer', customer }];
      if (event.type === 'customer.updated' && paymentMethodChanged(event.data.previous_attributes)) {
        changes.push({ kind: 'payment_method_changed', psp_customer_id: customer.psp_customer_id });
      }
      return changes;
    }
    case 'payment_method.attached': {
      // A customer adding a card after a failure is a payment-method change, as much as a new default.
      const customerId = idOf(object.customer);
      return customerId ? [{ kind: 'payment_method_changed', psp_customer_id: customerId }] : null;
    }
    case 'customer.subscription.created':
    case 'customer.subscription.updated':
    case 'customer.subscription.paused':
    case 'customer.subscription.resumed': {
      const subscription = subscriptionFacts(object, at);
      if (!subscription) return null;
      return [{ kind: 'subscription', subscription, created: event.type === 'customer.subscription.created' }];
    }
    case 'customer.subscription.trial_will_end': {
      const subscription = subscriptionFacts(object, at);
      return subscription ? [{ kind: 'trial_will_end', subscription }] : null;
    }
    case 'customer.subscription.deleted': {
      const subscription = subscriptionFacts(object, at);
      if (!subscription) return null;
      const details = isObject(object.cancellation_details) ? object.cancellation_details : {};
      const reason = str(details.reason);
      return [
        {
          kind: 'subscription_deleted',
          subscription: { ...subscription, status: 'canceled', canceled_at: subscription.canceled_at ?? at },
          ended_at: time(object.ended_at),
          reason: reason === 'payment_failed' || reason === 'cancellation_requested' ? reason : 'other',
          feedback: str(details.feedback),
          comment: str(details.comment),
        },
      ];
    }
    case 'invoice.payment_failed':
      if (isSignupPayment(object)) return { set_aside: 'signup_payment' };
      return invoiceFailed(object, at, context);
    case 'invoice.paid':
    case 'invoice.payment_succeeded': {
      const invoiceId = str(object.id);
      if (!invoiceId) return null;
      return [
        {
          kind: 'invoice_paid',
          psp_invoice_id: invoiceId,
          attempt_count: int(object.attempt_count) ?? 0,
          paid_out_of_band: object.paid_out_of_band === true,
          happened_at: statusTransition(object, 'paid_at'),
        },
      ];
    }
    case 'invoice.marked_uncollectible':
    case 'invoice.voided': {
      const invoiceId = str(object.id);
      if (!invoiceId) return null;
      return [
        {
          kind: 'invoice_closed',
          psp_invoice_id: invoiceId,
          status: event.type === 'invoice.voided' ? 'void' : 'uncollectible',
          happened_at: statusTransition(
            object,
            event.type === 'invoice.voided' ? 'voided_at' : 'marked_uncollectible_at',
          ),
        },
      ];
    }
    default:
      return null;
  }
}

/**
 * The invoice's own time of a transition (`status_transitions.paid_at`, `.voided_at`,
 * `.marked_uncollectible_at`): to the second when it happened, where the event's `created` is
 * when Stripe wrote the event about it. Null when absent (the event's time then counts).
 */
function statusTransition(invoice: StripeObject, field: 'paid_at' | 'voided_at' | 'marked_uncollectible_at') {
  return isObject(invoice.status_transitions) ? time(invoice.status_transitions[field]) : null;
}

/** `customer.updated` whose previous attributes include the default payment method or source. */
function paymentMethodChanged(previous: StripeObject | undefined): boolean {
  if (!previous) return false;
  if ('default_source' in previous) return true;
  return isObject(previous.invoice_settings) && 'default_payment_method' in previous.invoice_settings;
}

/**
 * The first invoice of a new subscription (`billing_reason: subscription_create`, on the invoice
 * in both shapes, before `basil` and after). Its failed payment leaves the subscription
 * `incomplete`: Stripe's retries do not apply to it, the customer has 23 hours to pay it in the
 * session that signed them up, then the subscription expires. Nobody who never paid is dunned:
 * it opens no recovery campaign.
 */
function isSignupPayment(invoice: StripeObject): boolean {
  return invoice.billing_reason === 'subscription_create';
}

/**
 * An invoice whose payment failed. Invoices outside a subscription (one-off) are not
 * recovery campaigns of ours: ignored; nor is a signup's first invoice (isSignupPayment: the
 * backfill finds it open with a failed attempt). A zero amount due (a credit covered it) is
 * nothing to recover.
 */
export async function invoiceFailed(
  invoice: StripeObject,
  at: Date,
  context: NormaliseContext,
): Promise<ProcessorChange[] | null> {
  const invoiceId = str(invoice.id);
  const customerId = idOf(invoice.customer);
  const subscriptionId = invoiceSubscriptionId(invoice);
  const amount = int(invoice.amount_remaining) ?? int(invoice.amount_due);
  if (!invoiceId || !customerId || !subscriptionId || amount === null || amount <= 0) return null;
  if (isSignupPayment(invoice)) return null;
  const currency = (str(invoice.currency) ?? 'usd').toLowerCase();
  return [
    {
      kind: 'invoice_failed',
      psp_invoice_id: invoiceId,
      customer: {
        psp_customer_id: customerId,
        email: str(invoice.customer_email),
        name: str(invoice.customer_name),
        tags: [],
        created_at: time(invoice.created) ?? at,
      },
      subscription: subscriptionFromInvoice(invoice, subscriptionId, at),
      amount_cents: fromStripeAmount(amount, currency),
      currency,
      decline_code: await learnDeclineCode(invoice, context),
      attempt_count: int(invoice.attempt_count) ?? 1,
      // The same field before basil and from basil on: when Stripe's retry schedule tries next.
      next_payment_attempt: validTime(invoice.next_payment_attempt),
    },
  ];
}

/** A Stripe timestamp a Date can hold (one past year 275760 is none: no retry we can say the time of). */
function validTime(value: unknown): Date | null {
  const at = time(value);
  return at !== null && !Number.isNaN(at.getTime()) ? at : null;
}

async function learnDeclineCode(invoice: StripeObject, context: NormaliseContext): Promise<string> {
  try {
    return await declineCodeOfInvoice(invoice, context.stripe);
  } catch (error) {
    if (error instanceof StripeKeyRejectedError) {
      await context.onKeyRejected();
      return UNKNOWN_DECLINE;
    }
    if (context.lastAttempt) return UNKNOWN_DECLINE;
    throw error;
  }
}
