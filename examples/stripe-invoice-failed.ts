/**
 * POSTs a Stripe-signed `invoice.payment_failed` to a workspace's processor connection, as
 * Stripe would: the quickest way to watch a campaign open and `recovery.opened` go out
 * without a Stripe account. Signed with the official library's generateTestHeaderString.
 *
 *     npm run --silent cli -- processor connect --workspace <W> --provider stripe \
 *       --webhook-secret whsec_$(openssl rand -hex 24)          # prints webhook_url
 *     CONNECTION_URL=<webhook_url> WEBHOOK_SECRET=whsec_... npx tsx examples/stripe-invoice-failed.ts
 *
 * Optional: CUSTOMER_EMAIL, AMOUNT (minor units, default 4900), CURRENCY (default usd),
 * BASIL=1 for the invoice shape of API version 2025-03-31.basil and later.
 */
import { randomBytes } from 'node:crypto';
import Stripe from 'stripe';

function fail(message: string): never {
  process.stderr.write(`stripe-invoice-failed: ${message}\n`);
  process.exit(1);
}

const url = process.env.CONNECTION_URL || fail('set CONNECTION_URL to the webhook_url `processor connect` printed');
const target = URL.canParse(url) ? new URL(url) : undefined;
if (!target || !['http:', 'https:'].includes(target.protocol)) {
  fail(
    `CONNECTION_URL (${url}) is not an http:// or https:// URL: set it to the webhook_url \`processor connect\` printed.`,
  );
}
const secret =
  process.env.WEBHOOK_SECRET || fail('set WEBHOOK_SECRET to the whsec_ value given to `processor connect`');
const amount = Number(process.env.AMOUNT || 4900);
if (!Number.isSafeInteger(amount) || amount <= 0) fail('AMOUNT must be a positive integer in minor units');
const currency = (process.env.CURRENCY || 'usd').toLowerCase();
const basil = process.env.BASIL === '1';

const id = (prefix: string) => `${prefix}_${randomBytes(8).toString('hex')}`;
const now = Math.floor(Date.now() / 1000);
const customer = id('cus');
const subscription = id('sub');
const invoice = {
  id: id('in'),
  object: 'invoice',
  amount_due: amount,
  amount_remaining: amount,
  attempt_count: 1,
  attempted: true,
  billing_reason: 'subscription_cycle',
  collection_method: 'charge_automatically',
  created: now - 60,
  currency,
  customer,
  customer_email: process.env.CUSTOMER_EMAIL || `jenny.${randomBytes(3).toString('hex')}@example.com`,
  customer_name: 'Jenny Rosen',
  lines: {
    object: 'list',
    data: [
      {
        id: id('il'),
        object: 'line_item',
        amount,
        currency,
        description: 'Pro plan',
        period: { start: now - 60, end: now + 30 * 86_400 },
        price: {
          id: 'price_pro',
          object: 'price',
          nickname: 'Pro',
          recurring: { interval: 'month', interval_count: 1 },
          unit_amount: amount,
        },
        quantity: 1,
      },
    ],
    has_more: false,
  },
  status: 'open',
  ...(basil
    ? { parent: { type: 'subscription_details', subscription_details: { metadata: {}, subscription } } }
    : { subscription, payment_intent: id('pi'), charge: id('ch'), paid: false }),
};
const event = {
  id: id('evt'),
  object: 'event',
  api_version: basil ? '2025-03-31.basil' : '2024-06-20',
  created: now,
  data: { object: invoice },
  livemode: false,
  pending_webhooks: 1,
  request: { id: null, idempotency_key: null },
  type: 'invoice.payment_failed',
};

const TIMEOUT_MS = 30_000;

/** Why a request got no answer, in words: Node's fetch says only "fetch failed", the cause says why. */
function networkReason(error: unknown): string {
  if (error instanceof Error && error.name === 'TimeoutError') return `no answer within ${TIMEOUT_MS / 1000} s`;
  const cause = error instanceof Error && error.cause instanceof Error ? error.cause : error;
  const code = (cause as NodeJS.ErrnoException | undefined)?.code;
  switch (code) {
    case 'ECONNREFUSED':
      return 'nothing is listening there (ECONNREFUSED)';
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `the host name does not resolve (${code})`;
    case 'ECONNRESET':
      return 'the connection was closed without an answer (ECONNRESET)';
    default:
      return cause instanceof Error
        ? `${cause.message}${code && !cause.message.includes(code) ? ` (${code})` : ''}`
        : 'unknown network error';
  }
}

const payload = JSON.stringify(event);
let response: Response;
try {
  response = await fetch(target, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'stripe-signature': Stripe.webhooks.generateTestHeaderString({ payload, secret }),
    },
    body: payload,
    signal: AbortSignal.timeout(TIMEOUT_MS),
  });
} catch (error) {
  fail(
    `could not reach ${target.origin} (CONNECTION_URL): ${networkReason(error)}; check that the service is running ` +
      "there and that CONNECTION_URL is the webhook_url `processor connect` printed, on the service's port " +
      '(run the CLI with the settings `npm start` prints, BASE_URL included, and the URL is right).',
  );
}
const text = await response.text();
/** The service answers JSON; something else at that address (a wrong port or path) may not. */
const answer: unknown = (() => {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
})();
process.stdout.write(
  `${JSON.stringify({ status: response.status, answer, event_id: event.id, invoice_id: invoice.id, customer_email: invoice.customer_email })}\n`,
);
if (!response.ok) process.exit(1);
