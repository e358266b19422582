import type { CustomerFacts, SubscriptionFacts } from '@retention/domain';
import type { SubscriptionInterval, SubscriptionStatus } from '@retention/core';
import { fromStripeAmount } from './amounts.js';

/**
 * Reading Stripe objects as they arrive in events of any API version. Webhook endpoints keep
 * the version they were created with, so one connection may see invoices from before
 * `basil` (2025-03-31: `subscription`, `payment_intent`, `charge` on the invoice) and after
 * it (`parent.subscription_details.subscription`; payments as InvoicePayment objects).
 * Nothing here trusts a field's type: a payload is data from outside.
 */

export type StripeObject = Record<string, unknown>;

export const isObject = (value: unknown): value is StripeObject =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

export function str(value: unknown): string | null {
  return typeof value === 'string' && value.length > 0 ? value : null;
}

export function int(value: unknown): number | null {
  return typeof value === 'number' && Number.isSafeInteger(value) ? value : null;
}

/** A Stripe timestamp (unix seconds) as a Date; null when absent. */
export function time(value: unknown): Date | null {
  const seconds = int(value);
  return seconds === null ? null : new Date(seconds * 1000);
}

/** An id field that may arrive as the id or as the expanded object. */
export function idOf(value: unknown): string | null {
  if (isObject(value)) return str(value.id);
  return str(value);
}

/** `metadata.tags`, comma-separated, as the table in docs/processor.md says. */
function tagsOf(customer: StripeObject): string[] {
  const metadata = isObject(customer.metadata) ? customer.metadata : {};
  const tags = str(metadata.tags);
  return tags === null
    ? []
    : tags
        .split(',')
        .map((tag) => tag.trim())
        .filter((tag) => tag.length > 0);
}

export function customerFacts(customer: StripeObject, fallbackCreated: Date): CustomerFacts | null {
  const id = str(customer.id);
  if (id === null) return null;
  return {
    psp_customer_id: id,
    email: str(customer.email),
    name: str(customer.name),
    tags: tagsOf(customer),
    created_at: time(customer.created) ?? fallbackCreated,
  };
}

/**
 * Stripe's statuses in ours: `unpaid` is past due (still owed, retries over); `incomplete`
 * (the first payment has not gone through) too; `incomplete_expired` never started, so it is
 * canceled.
 */
function subscriptionStatusOf(status: unknown): SubscriptionStatus {
  switch (status) {
    case 'trialing':
    case 'active':
    case 'past_due':
    case 'paused':
    case 'canceled':
      return status;
    case 'unpaid':
    case 'incomplete':
      return 'past_due';
    case 'incomplete_expired':
      return 'canceled';
    default:
      return 'active';
  }
}

interface Recurring {
  interval: string;
  interval_count: number;
}

/**
 * Our subscriptions bill monthly or yearly. A price every n months or years is stored per one
 * month or year; a weekly or daily price as its monthly equivalent (52/12 weeks, 365/12 days).
 */
function normaliseInterval(amount: number, recurring: Recurring): { amount: number; interval: SubscriptionInterval } {
  const count = Math.max(1, recurring.interval_count);
  switch (recurring.interval) {
    case 'year':
      return { amount: Math.round(amount / count), interval: 'year' };
    case 'week':
      return { amount: Math.round((amount * 52) / 12 / count), interval: 'month' };
    case 'day':
      return { amount: Math.round((amount * 365) / 12 / count), interval: 'month' };
    default:
      return { amount: Math.round(amount / count), interval: 'month' };
  }
}

function itemsOf(subscription: StripeObject): StripeObject[] {
  const items = isObject(subscription.items) && Array.isArray(subscription.items.data) ? subscription.items.data : [];
  return items.filter(isObject);
}

/** A price (or a legacy plan) of an item or an invoice line. */
function priceOf(holder: StripeObject): StripeObject | null {
  if (isObject(holder.price)) return holder.price;
  if (isObject(holder.plan)) return holder.plan;
  return null;
}

function recurringOf(price: StripeObject | null): Recurring {
  if (price && isObject(price.recurring)) {
    return {
      interval: str(price.recurring.interval) ?? 'month',
      interval_count: int(price.recurring.interval_count) ?? 1,
    };
  }
  if (price && str(price.interval))
    return { interval: str(price.interval)!, interval_count: int(price.interval_count) ?? 1 };
  return { interval: 'month', interval_count: 1 };
}

function planNameOf(price: StripeObject | null): string {
  if (!price) return 'Subscription';
  const product = isObject(price.product) ? str(price.product.name) : null;
  return str(price.nickname) ?? product ?? idOf(price.product) ?? str(price.id) ?? 'Subscription';
}

/** Amount × quantity over the items, per month or year, with the first item's plan name. */
export function subscriptionFacts(subscription: StripeObject, fallbackCreated: Date): SubscriptionFacts | null {
  const id = str(subscription.id);
  const customerId = idOf(subscription.customer);
  if (id === null || customerId === null) return null;
  const items = itemsOf(subscription);
  const firstPrice = items.length > 0 ? priceOf(items[0]!) : priceOf(subscription);
  const recurring = recurringOf(firstPrice);
  let total = 0;
  for (const item of items) {
    const price = priceOf(item);
    const unit =
      int(price?.unit_amount) ??
      (typeof price?.unit_amount_decimal === 'string' ? Math.round(Number(price.unit_amount_decimal)) : 0);
    total += unit * (int(item.quantity) ?? 1);
  }
  const currency = (str(subscription.currency) ?? str(firstPrice?.currency) ?? 'usd').toLowerCase();
  // In our minor units before a weekly or daily price is made monthly, which rounds.
  const { amount, interval } = normaliseInterval(fromStripeAmount(total, currency), recurring);
  // Before basil the period is on the subscription; from basil on, on each item.
  const periodEnd = time(subscription.current_period_end) ?? time(items[0]?.current_period_end);
  return {
    psp_subscription_id: id,
    psp_customer_id: customerId,
    status: subscriptionStatusOf(subscription.status),
    plan_name: planNameOf(firstPrice),
    amount_cents: Math.max(0, amount),
    currency,
    interval,
    trial_end: time(subscription.trial_end),
    current_period_end: periodEnd,
    canceled_at: time(subscription.canceled_at) ?? time(subscription.ended_at),
    created_at: time(subscription.created) ?? time(subscription.start_date) ?? fallbackCreated,
  };
}

/** The subscription an invoice bills: `subscription` before basil, `parent.subscription_details` from basil on. */
export function invoiceSubscriptionId(invoice: StripeObject): string | null {
  const legacy = idOf(invoice.subscription);
  if (legacy) return legacy;
  const parent = isObject(invoice.parent) ? invoice.parent : null;
  const details = parent && isObject(parent.subscription_details) ? parent.subscription_details : null;
  return details ? idOf(details.subscription) : null;
}

/**
 * What an invoice says of its subscription, for one we have not mirrored yet (its events are
 * late, or it predates the connection): the subscription's own events overwrite it.
 */
export function subscriptionFromInvoice(invoice: StripeObject, subscriptionId: string, at: Date): SubscriptionFacts {
  const lines = isObject(invoice.lines) && Array.isArray(invoice.lines.data) ? invoice.lines.data.filter(isObject) : [];
  const line = lines[0] ?? {};
  const pricing = isObject(line.pricing) && isObject(line.pricing.price_details) ? line.pricing.price_details : null;
  const price = priceOf(line) ?? (pricing ? { id: pricing.price, product: pricing.product } : null);
  const recurring = recurringOf(price);
  const { interval } = normaliseInterval(0, recurring);
  const subtotal = int(invoice.subtotal) ?? int(invoice.amount_due) ?? 0;
  const currency = (str(invoice.currency) ?? 'usd').toLowerCase();
  const perInterval = normaliseInterval(fromStripeAmount(subtotal, currency), recurring).amount;
  return {
    psp_subscription_id: subscriptionId,
    psp_customer_id: idOf(invoice.customer) ?? '',
    status: 'past_due',
    plan_name: str(line.description) ?? planNameOf(price),
    amount_cents: Math.max(0, perInterval),
    currency,
    interval,
    trial_end: null,
    current_period_end: time(line.period && isObject(line.period) ? line.period.end : null),
    canceled_at: null,
    created_at: at,
  };
}
