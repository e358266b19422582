import {
  buildEventData,
  EVENT_TYPES,
  PING_DATA,
  PING_EVENT_TYPE,
  pingPayloadSchema,
  RETRY_JITTER,
  SIGNATURE_HEADER,
  SIGNATURE_HEADER_PATTERN,
  SIGNATURE_TOLERANCE_SECONDS,
  webhookPayloadSchema,
  type EventDataMap,
  type EventType,
} from '@retention/core';
import { AUTO_DISABLE_AFTER_FAILURES, RESPONSE_LOG_BYTES } from '@retention/domain';
import type { SchemaComponents, JsonSchema } from './schemas.js';
import { NODE_VERIFY_SNIPPET, SDK_VERIFY_SNIPPET } from './webhook-snippets.js';

/**
 * The outbound webhooks in the OpenAPI document (3.1's top-level `webhooks`): one POST per
 * event type of core's catalog, plus the dashboard's Send test (`ping`), each with the body
 * schema core builds around the type's data schema (the same one the domain validates events
 * with), the headers the sender sets and the answers it expects. The prose of the Webhooks tag
 * (signature, retries) is built from the constants the sender and the worker use.
 */

export const WEBHOOKS_TAG = 'Webhooks';

export interface WebhookOperation {
  operationId: string;
  tags: string[];
  summary: string;
  description: string;
  security: [];
  parameters: Array<{ name: string; in: 'header'; required: true; description: string; schema: JsonSchema }>;
  requestBody: {
    required: true;
    description: string;
    content: { 'application/json': { schema: JsonSchema; example: unknown } };
  };
  responses: Record<string, { description: string }>;
}

export interface WebhookOptions {
  /** The service's public URL, named in the User-Agent. */
  serverUrl: string;
  /** WEBHOOK_TIMEOUT_MS: how long an attempt may take. */
  timeoutMs: number;
  /** WEBHOOK_RETRY_DELAYS: the pause before each retry. */
  retryDelaysMs: readonly number[];
}

/** When each event is sent (spec part 6.2), one sentence each. */
const WHEN: Record<EventType, string> = {
  'recovery.opened': 'A payment failed for the first time on an invoice: a recovery campaign opens',
  'recovery.recovered': 'The campaign’s invoice was paid: the campaign closed as recovered',
  'recovery.lost':
    'The campaign closed unpaid. `data.reason` is `auto_close_stale` when it was closed for age, `data.source` is `dashboard` when someone marked it lost; neither when the processor gave up',
  'cancel.saved': 'A customer in the cancel flow accepted a save offer',
  'cancel.lost': 'A customer in the cancel flow canceled anyway',
  'trial.reminder_sent': 'A trial-ending reminder email went out',
  'reactivation.sent': 'A win-back email went out',
  'winback.recorded': 'A customer who had canceled subscribed again',
};

const ID = '3f0e8c52-6d1a-4b7e-9a57-0c2f4e1b8d90';
const OTHER_ID = '8b1d2e4f-0a3c-4e5b-8f6a-1c2d3e4f5a6b';

/** One example `data` per type, checked against the catalog when the document is built. */
const EXAMPLES: EventDataMap = {
  'recovery.opened': {
    campaign_id: ID,
    customer_email: 'ann@example.com',
    amount_cents: 4900,
    currency: 'usd',
    decline_code: 'insufficient_funds',
    decline_category: 'soft',
    psp_invoice_id: 'in_1QxYz2AbCdEf',
  },
  'recovery.recovered': {
    campaign_id: ID,
    customer_email: 'ann@example.com',
    amount_cents: 4900,
    currency: 'usd',
    recovered_via: 'retry',
  },
  'recovery.lost': {
    campaign_id: ID,
    customer_email: 'ann@example.com',
    amount_cents: 4900,
    currency: 'usd',
    reason: 'auto_close_stale',
  },
  'cancel.saved': {
    session_id: ID,
    outcome: 'saved_discount',
    reason_code: 'too_expensive',
    customer_email: 'ann@example.com',
    monthly_mrr_cents: 4900,
    currency: 'usd',
  },
  'cancel.lost': {
    session_id: ID,
    outcome: 'canceled',
    reason_code: 'switched_service',
    customer_email: 'ann@example.com',
    monthly_mrr_cents: 4900,
    currency: 'usd',
  },
  'trial.reminder_sent': {
    reminder_id: ID,
    customer_email: 'ann@example.com',
    subscription_id: OTHER_ID,
    trial_end: '2026-12-01T00:00:00.000Z',
  },
  'reactivation.sent': { reactivation_id: ID, customer_email: 'ann@example.com', subscription_id: OTHER_ID },
  'winback.recorded': {
    winback_id: ID,
    customer_email: 'ann@example.com',
    psp_subscription_id: 'sub_1QxYz2AbCdEf',
    days_away: 42,
    amount_cents: 4900,
    currency: 'usd',
  },
};

const EXAMPLE_CREATED_AT = '2026-11-25T07:55:02.123Z';

/** `recovery.opened` → `RecoveryOpenedEvent`: the title of a type's body schema. */
function title(type: string): string {
  return `${type
    .split(/[._]/)
    .map((word) => word.charAt(0).toUpperCase() + word.slice(1))
    .join('')}Event`;
}

export function buildWebhooks(
  options: WebhookOptions,
  components: SchemaComponents,
): Record<string, { post: WebhookOperation }> {
  const webhooks: Record<string, { post: WebhookOperation }> = {};
  for (const type of EVENT_TYPES) {
    webhooks[type] = {
      post: operation(
        options,
        type,
        WHEN[type],
        components.refer(webhookPayloadSchema(type)),
        buildEventData(type, EXAMPLES[type]),
      ),
    };
  }
  webhooks[PING_EVENT_TYPE] = {
    post: operation(
      options,
      PING_EVENT_TYPE,
      'Sent only by the dashboard’s **Send test** action on an endpoint, to check a receiver: `data` is `{"test": true}`. Signed like any event and recorded in the delivery log, but never retried, and its failure does not count toward disabling the endpoint',
      components.refer(pingPayloadSchema()),
      PING_DATA,
    ),
  };
  return webhooks;
}

function operation(
  options: WebhookOptions,
  type: string,
  when: string,
  schema: JsonSchema,
  data: unknown,
): WebhookOperation {
  const attempts = options.retryDelaysMs.length + 1;
  return {
    operationId: `webhook_${type.replace(/\W/g, '_')}`,
    tags: [WEBHOOKS_TAG],
    summary: type,
    description: `${when}.`,
    security: [],
    parameters: [
      {
        name: SIGNATURE_HEADER,
        in: 'header',
        required: true,
        description: `\`t=<unix seconds>,v1=<hex>\`: \`v1\` is the lowercase hex HMAC-SHA256, keyed with the endpoint’s signing secret (\`whsec_…\` included), of \`<t>.<raw body>\`. During a secret roll’s overlap there is one \`v1\` per secret. Verify it before trusting the body.`,
        schema: { type: 'string', pattern: SIGNATURE_HEADER_PATTERN },
      },
      {
        name: 'User-Agent',
        in: 'header',
        required: true,
        description: 'The webhook format’s version (1) and the service’s URL.',
        schema: { type: 'string', const: `Service-Webhooks/1 (+${options.serverUrl})` },
      },
    ],
    requestBody: {
      required: true,
      description: `\`${title(type)}\`: the event’s type, when it happened and its data. Verify the signature over these exact bytes, before parsing them.`,
      content: {
        'application/json': {
          schema: { title: title(type), ...schema },
          example: { type, created_at: EXAMPLE_CREATED_AT, data },
        },
      },
    },
    responses: {
      '2XX': {
        description: `Received. Answer within ${duration(options.timeoutMs)} and do the work afterwards; only the status counts (the first ${RESPONSE_LOG_BYTES / 1024} KB of the body are kept for the delivery log).`,
      },
      '401': {
        description: `The signature does not verify, or its \`t\` is more than ${SIGNATURE_TOLERANCE_SECONDS} seconds from your clock. A failed attempt, retried like any other.`,
      },
      default: {
        description: `Any other status (a 3xx included: redirects are not followed), no answer within ${duration(options.timeoutMs)}, or a connection or TLS error is a failed attempt: retried, up to ${attempts} attempts in all.`,
      },
    },
  };
}

/** The Webhooks tag's description: how to receive, verify and what failures do. */
export function webhooksDescription(options: WebhookOptions): string {
  const delays = options.retryDelaysMs.map(duration).join(', ');
  return `The service POSTs events to the HTTPS URLs a workspace registers (dashboard: Settings, Outbound webhooks). An endpoint subscribed to no type explicitly receives every type. The body is JSON with three keys: \`type\`, \`created_at\` and \`data\`. The request carries \`Content-Type: application/json\`, \`User-Agent: Service-Webhooks/1 (+${options.serverUrl})\` and \`${SIGNATURE_HEADER}\`, no other header of ours. Events are sent only while the workspace’s payment processor is connected and syncing.

### Verifying the signature

\`${SIGNATURE_HEADER}: t=<unix seconds>,v1=<hex>\`. \`v1\` is the HMAC-SHA256, keyed with the endpoint’s whole signing secret (\`whsec_…\` included), of \`<t>.<raw body>\`: the timestamp, a dot, then the exact bytes received, never a body parsed and serialised again. It is bare lowercase hex. While a rolled secret’s overlap is open the header carries one \`v1\` per valid secret (\`t=…,v1=<new>,v1=<old>\`): accept the request if any \`v1\` matches, comparing in constant time. Reject a \`t\` more than ${SIGNATURE_TOLERANCE_SECONDS} seconds from your clock (a replayed request), and answer 401 when a check fails. Each attempt is signed afresh, with a new \`t\`.

**With our SDK** (\`@retention/sdk\`):

\`\`\`ts
${SDK_VERIFY_SNIPPET}\`\`\`

**Node.js, no dependency:**

\`\`\`js
${NODE_VERIFY_SNIPPET}\`\`\`

### Retries and auto-disable

Any 2xx within ${duration(options.timeoutMs)} is a success. Any other status, a timeout, or a connection or TLS error fails the attempt, which is retried after ${delays} (each up to ${Math.round(RETRY_JITTER * 100)}% later, never earlier): ${options.retryDelaysMs.length + 1} attempts in all, then the delivery is failed. ${AUTO_DISABLE_AFTER_FAILURES} failed attempts in a row on an endpoint, across all its deliveries, disable it until it is turned back on in the dashboard; owners and admins are told. Delivery is at least once and events can arrive out of order: make your handler idempotent (keyed on the object’s id and the type) and order by \`created_at\`.`;
}

/** 5000 → `5 s`, 300000 → `5 min`, 7200000 → `2 h`: the largest unit that divides it. */
function duration(ms: number): string {
  const units: Array<[number, string]> = [
    [3_600_000, 'h'],
    [60_000, 'min'],
    [1000, 's'],
  ];
  for (const [size, unit] of units) if (ms % size === 0) return `${ms / size} ${unit}`;
  return `${ms} ms`;
}
