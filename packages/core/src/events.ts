import { Type, type Static, type TObject, type TSchema } from '@sinclair/typebox';
import { CANCEL_REASON_CODES, DECLINE_CATEGORIES, RECOVERED_VIA, SAVED_OUTCOMES } from './enums.js';
import { Currency, Email, MinorUnits, OneOf, Timestamp, Uuid } from './schema-helpers.js';
import { compileValidator } from './validation.js';

/**
 * The event catalog (docs/webhooks.md, "Event types"): each of the eight event types with the exact fields of its
 * `data`. The domain builds event rows through `buildEventData`, the worker sends them, and
 * the SDK's types are checked against these schemas, so the set lives here and only here.
 */

const campaignFields = {
  campaign_id: Uuid(),
  customer_email: Email(),
  amount_cents: MinorUnits(),
  currency: Currency(),
};

const cancelFields = {
  session_id: Uuid(),
  reason_code: OneOf(CANCEL_REASON_CODES),
  customer_email: Email(),
  monthly_mrr_cents: MinorUnits(),
  currency: Currency(),
};

const strict = { additionalProperties: false } as const;

export const EVENT_DATA_SCHEMAS = {
  'recovery.opened': Type.Object(
    {
      ...campaignFields,
      decline_code: Type.String({ minLength: 1 }),
      decline_category: OneOf(DECLINE_CATEGORIES),
      psp_invoice_id: Type.String({ minLength: 1 }),
    },
    strict,
  ),
  'recovery.recovered': Type.Object({ ...campaignFields, recovered_via: OneOf(RECOVERED_VIA) }, strict),
  // `reason` when a stale campaign was auto-closed, `source` when an operator marked it lost,
  // neither when the processor gave up; never both.
  'recovery.lost': Type.Union([
    Type.Object(campaignFields, strict),
    Type.Object({ ...campaignFields, reason: Type.Literal('auto_close_stale') }, strict),
    Type.Object({ ...campaignFields, source: Type.Literal('dashboard') }, strict),
  ]),
  'cancel.saved': Type.Object({ ...cancelFields, outcome: OneOf(SAVED_OUTCOMES) }, strict),
  'cancel.lost': Type.Object({ ...cancelFields, outcome: Type.Literal('canceled') }, strict),
  'trial.reminder_sent': Type.Object(
    {
      reminder_id: Uuid(),
      customer_email: Email(),
      subscription_id: Uuid(),
      trial_end: Timestamp('When the trial ends'),
    },
    strict,
  ),
  'reactivation.sent': Type.Object(
    { reactivation_id: Uuid(), customer_email: Email(), subscription_id: Uuid() },
    strict,
  ),
  'winback.recorded': Type.Object(
    {
      winback_id: Uuid(),
      customer_email: Email(),
      psp_subscription_id: Type.String({ minLength: 1 }),
      days_away: Type.Integer({ minimum: 0 }),
      amount_cents: MinorUnits(),
      currency: Currency(),
    },
    strict,
  ),
} as const;

export type EventType = keyof typeof EVENT_DATA_SCHEMAS;
export const EVENT_TYPES = Object.keys(EVENT_DATA_SCHEMAS) as EventType[];

export type EventDataMap = { [T in EventType]: Static<(typeof EVENT_DATA_SCHEMAS)[T]> };
export type EventData<T extends EventType = EventType> = EventDataMap[T];

/** The `data` keys of each type, as docs/webhooks.md lists them (optional keys included). */
export function eventDataKeys(type: EventType): string[] {
  const schema = EVENT_DATA_SCHEMAS[type];
  const objects: TObject[] = 'anyOf' in schema ? (schema.anyOf as TObject[]) : [schema];
  return [...new Set(objects.flatMap((object) => Object.keys(object.properties)))];
}

export function isEventType(value: unknown): value is EventType {
  return typeof value === 'string' && Object.hasOwn(EVENT_DATA_SCHEMAS, value);
}

const validators = Object.fromEntries(
  EVENT_TYPES.map((type) => [type, compileValidator(EVENT_DATA_SCHEMAS[type])]),
) as { [T in EventType]: ReturnType<typeof compileValidator> };

/**
 * Checks an event's data against the catalog and returns it unchanged. A mismatch is a
 * programming error in the caller, so it throws instead of returning a client error.
 */
export function buildEventData<T extends EventType>(type: T, data: EventData<T>): EventData<T> {
  const problem = validators[type](data);
  if (problem) throw new TypeError(`Event ${type} has invalid data: ${problem}`);
  return data;
}

/** The synthetic payload of the dashboard's Send test action (docs/webhooks.md). */
export const PING_EVENT_TYPE = 'ping';
export const PING_DATA = Object.freeze({ test: true as const });

/** The body of every webhook request (docs/webhooks.md, "The request"). */
export type WebhookPayload =
  | { [T in EventType]: { type: T; created_at: string; data: EventData<T> } }[EventType]
  | { type: typeof PING_EVENT_TYPE; created_at: string; data: { test: true } };

/** Serialises exactly the three body keys, in a fixed order. */
export function serializeWebhookPayload(type: string, createdAt: string, data: unknown): string {
  return JSON.stringify({ type, created_at: createdAt, data });
}

/**
 * The body of a webhook request of one type, as a schema: the envelope serializeWebhookPayload
 * writes around the type's data schema. The OpenAPI document publishes these, so the
 * reference describes the catalog above and cannot drift from it.
 */
export function webhookPayloadSchema<T extends EventType>(type: T) {
  return envelope(type, EVENT_DATA_SCHEMAS[type]);
}

/** The body of the dashboard's Send test request. */
export function pingPayloadSchema() {
  return envelope(
    PING_EVENT_TYPE,
    Type.Object({ test: Type.Literal(PING_DATA.test, { description: 'Always true: a test, not an event' }) }, strict),
  );
}

function envelope<T extends string, D extends TSchema>(type: T, data: D) {
  return Type.Object(
    {
      type: Type.Literal(type, { description: 'The event type' }),
      created_at: Timestamp(
        'When the event happened (for an event the payment processor caused, when the processor says it happened); the same on every attempt',
      ),
      data,
    },
    strict,
  );
}
