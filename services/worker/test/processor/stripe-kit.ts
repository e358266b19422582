import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import Stripe from 'stripe';

/**
 * Stripe-shaped test data and a stand-in for Stripe's API. Objects follow Stripe's published
 * examples (API reference: the customer, subscription, invoice, payment intent and invoice
 * payment objects); the two invoice shapes come from payloads kept under fixtures/ (before
 * `basil`, and from `basil` on). Deliveries are signed with the library's own
 * generateTestHeaderString.
 */

const here = path.dirname(fileURLToPath(import.meta.url));

export type StripeObject = Record<string, any>;

export function fixture(name: string): StripeObject {
  return JSON.parse(readFileSync(path.join(here, 'fixtures', name), 'utf8')) as StripeObject;
}

const unique = () => randomBytes(6).toString('hex');
export const nowSeconds = () => Math.floor(Date.now() / 1000);

export function stripeEvent(
  type: string,
  object: StripeObject,
  options: { created?: number; previous?: StripeObject } = {},
) {
  return {
    id: `evt_${unique()}`,
    object: 'event',
    api_version: '2024-06-20',
    created: options.created ?? nowSeconds(),
    data: { object, ...(options.previous && { previous_attributes: options.previous }) },
    livemode: false,
    pending_webhooks: 1,
    request: { id: null, idempotency_key: null },
    type,
  };
}

export function stripeCustomer(fields: Partial<StripeObject> = {}): StripeObject {
  return {
    id: `cus_${unique()}`,
    object: 'customer',
    balance: 0,
    created: nowSeconds() - 86_400 * 90,
    currency: 'usd',
    default_source: null,
    delinquent: false,
    description: null,
    email: `jenny.${unique()}@example.com`,
    invoice_prefix: 'ABC123',
    invoice_settings: { custom_fields: null, default_payment_method: 'pm_1OldCard', footer: null },
    livemode: false,
    metadata: {},
    name: 'Jenny Rosen',
    ...fields,
  };
}

export function stripeSubscription(customer: string, fields: Partial<StripeObject> = {}): StripeObject {
  const created = fields.created ?? nowSeconds() - 86_400 * 30;
  return {
    id: `sub_${unique()}`,
    object: 'subscription',
    billing_cycle_anchor: created,
    cancel_at: null,
    cancel_at_period_end: false,
    canceled_at: null,
    cancellation_details: { comment: null, feedback: null, reason: null },
    collection_method: 'charge_automatically',
    created,
    currency: 'usd',
    current_period_end: created + 86_400 * 30,
    current_period_start: created,
    customer,
    ended_at: null,
    items: {
      object: 'list',
      data: [
        {
          id: `si_${unique()}`,
          object: 'subscription_item',
          price: {
            id: 'price_1Pro',
            object: 'price',
            currency: 'usd',
            nickname: 'Pro',
            product: 'prod_Pro',
            recurring: { interval: 'month', interval_count: 1 },
            type: 'recurring',
            unit_amount: 2450,
          },
          quantity: 2,
        },
      ],
    },
    livemode: false,
    metadata: {},
    start_date: created,
    status: 'active',
    trial_end: null,
    trial_start: null,
    ...fields,
  };
}

/** An invoice of a subscription, before `basil`: `subscription`, `payment_intent`, `charge` on it. */
export function legacyInvoice(
  customer: StripeObject,
  subscription: string,
  fields: Partial<StripeObject> = {},
): StripeObject {
  const base = fixture('invoice.payment_failed.2024-06-20.json').data.object as StripeObject;
  return {
    ...base,
    id: `in_${unique()}`,
    customer: customer.id,
    customer_email: customer.email,
    customer_name: customer.name,
    subscription,
    payment_intent: `pi_${unique()}`,
    charge: `ch_${unique()}`,
    amount_due: 4900,
    amount_remaining: 4900,
    created: nowSeconds() - 3600,
    ...fields,
  };
}

/** The same, from `basil` on: the subscription under `parent`, no `payment_intent` or `charge`. */
export function basilInvoice(
  customer: StripeObject,
  subscription: string,
  fields: Partial<StripeObject> = {},
): StripeObject {
  const base = fixture('invoice.payment_failed.2025-03-31.basil.json').data.object as StripeObject;
  return {
    ...base,
    id: `in_${unique()}`,
    customer: customer.id,
    customer_email: customer.email,
    customer_name: customer.name,
    parent: { ...base.parent, subscription_details: { metadata: {}, subscription } },
    created: nowSeconds() - 3600,
    ...fields,
  };
}

export function paymentIntent(
  id: string,
  declineCode: string | null,
  fields: Partial<StripeObject> = {},
): StripeObject {
  return {
    id,
    object: 'payment_intent',
    amount: 4900,
    currency: 'usd',
    status: 'requires_payment_method',
    last_payment_error:
      declineCode === null
        ? null
        : { type: 'card_error', code: 'card_declined', decline_code: declineCode, message: 'Your card was declined.' },
    ...fields,
  };
}

/**
 * A failed payment of a `basil` invoice (API reference: the invoice payment object), as
 * FakeStripe's `GET /v1/invoice_payments` answers it with `expand[]=data.payment.payment_intent`:
 * its payment intent inline, declined with `declineCode`, for the invoice's amount. Stripe lists
 * an invoice's payments in `invoicePayments` under the invoice's id.
 */
export function invoicePayment(
  invoice: StripeObject,
  declineCode: string | null,
  fields: Partial<StripeObject> = {},
): StripeObject {
  const amount = invoice.amount_due as number;
  const currency = invoice.currency as string;
  return {
    id: `inpay_${unique()}`,
    object: 'invoice_payment',
    amount_paid: null,
    amount_requested: amount,
    created: nowSeconds(),
    currency,
    invoice: invoice.id,
    is_default: true,
    livemode: false,
    payment: {
      type: 'payment_intent',
      payment_intent: paymentIntent(`pi_${unique()}`, declineCode, { amount, currency }),
    },
    status: 'open',
    status_transitions: { canceled_at: null, paid_at: null },
    ...fields,
  };
}

export function signedDelivery(event: object, secret: string, timestamp = nowSeconds()) {
  const body = JSON.stringify(event);
  return { body, signature: Stripe.webhooks.generateTestHeaderString({ payload: body, secret, timestamp }) };
}

export async function postToConnection(
  url: string,
  event: object,
  secret: string,
  options: { timestamp?: number; body?: string; signature?: string } = {},
): Promise<{ status: number; body: any; ms: number }> {
  const signed = signedDelivery(event, secret, options.timestamp);
  const started = performance.now();
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'stripe-signature': options.signature ?? signed.signature },
    body: options.body ?? signed.body,
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : null, ms: performance.now() - started };
}

export const newWebhookSecret = () => `whsec_${randomBytes(24).toString('hex')}`;
export const newApiKey = () => `rk_test_${randomBytes(24).toString('hex')}`;

type Handler = (
  request: IncomingMessage,
  url: URL,
) => { status: number; body: unknown; headers?: Record<string, string> } | null;

/**
 * A local server answering the few Stripe endpoints the adapter uses, for one API key.
 * `requests` records each call; `override` lets a test answer 401, 429 or slowly.
 */
export class FakeStripe {
  readonly requests: Array<{
    method: string;
    path: string;
    query: URLSearchParams;
    authorization: string | undefined;
  }> = [];
  paymentIntents = new Map<string, StripeObject>();
  invoicePayments = new Map<string, StripeObject[]>();
  customers: StripeObject[] = [];
  subscriptions: StripeObject[] = [];
  invoices: StripeObject[] = [];
  override: Handler | null = null;
  /** Delay before each list page (to interrupt a backfill mid-way). */
  pageDelayMs = 0;
  /** Delay before answering a payment intent (to kill a worker mid-apply). */
  delayPaymentIntentsMs = 0;
  private server!: Server;

  constructor(readonly apiKey: string) {}

  static async start(apiKey: string): Promise<FakeStripe> {
    const fake = new FakeStripe(apiKey);
    fake.server = createServer((request, response) => void fake.handle(request, response));
    await new Promise<void>((resolve) => fake.server.listen(0, '127.0.0.1', resolve));
    return fake;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  private async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const url = new URL(request.url ?? '/', 'http://stripe.test');
    this.requests.push({
      method: request.method ?? '',
      path: url.pathname,
      query: url.searchParams,
      authorization: request.headers.authorization,
    });
    const answer = (status: number, body: unknown, headers: Record<string, string> = {}) => {
      response.writeHead(status, { 'content-type': 'application/json', 'request-id': `req_${unique()}`, ...headers });
      response.end(JSON.stringify(body));
    };
    const overridden = this.override?.(request, url);
    if (overridden) return answer(overridden.status, overridden.body, overridden.headers);
    if (request.headers.authorization !== `Bearer ${this.apiKey}`) {
      return answer(401, { error: { type: 'invalid_request_error', message: 'Invalid API Key provided' } });
    }
    const paymentIntent = /^\/v1\/payment_intents\/([^/]+)$/.exec(url.pathname);
    if (paymentIntent) {
      if (this.delayPaymentIntentsMs > 0)
        await new Promise((resolve) => setTimeout(resolve, this.delayPaymentIntentsMs));
      const found = this.paymentIntents.get(paymentIntent[1]!);
      return found
        ? answer(200, found)
        : answer(404, {
            error: { type: 'invalid_request_error', code: 'resource_missing', message: 'No such payment_intent' },
          });
    }
    if (url.pathname === '/v1/invoice_payments') {
      const invoice = url.searchParams.get('invoice') ?? '';
      return answer(200, {
        object: 'list',
        data: this.invoicePayments.get(invoice) ?? [],
        has_more: false,
        url: '/v1/invoice_payments',
      });
    }
    const lists: Record<string, StripeObject[]> = {
      // The key's check lists one of each (connect); nothing else reads these lists.
      '/v1/payment_intents': [...this.paymentIntents.values()],
      '/v1/events': [],
      '/v1/customers': this.customers,
      '/v1/subscriptions': this.subscriptions,
      '/v1/invoices': this.invoices.filter(
        (invoice) => !url.searchParams.get('status') || invoice.status === url.searchParams.get('status'),
      ),
    };
    const list = lists[url.pathname];
    if (list) {
      if (this.pageDelayMs > 0) await new Promise((resolve) => setTimeout(resolve, this.pageDelayMs));
      const limit = Number(url.searchParams.get('limit') ?? 10);
      const after = url.searchParams.get('starting_after');
      const start = after === null ? 0 : list.findIndex((item) => item.id === after) + 1;
      const data = list.slice(start, start + limit);
      return answer(200, { object: 'list', data, has_more: start + limit < list.length, url: url.pathname });
    }
    answer(404, {
      error: {
        type: 'invalid_request_error',
        message: `Unrecognized request URL (${request.method}: ${url.pathname})`,
      },
    });
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
