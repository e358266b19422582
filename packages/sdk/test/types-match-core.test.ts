/**
 * The SDK writes its types out by hand (it may not depend on the service's packages). This
 * file holds them to the schemas the API validates with and to the event catalog, twice:
 * - at compile time (`npm run typecheck` covers this file): each SDK type is identical to
 *   the core type derived from the schema, so a field added on either side breaks the build;
 * - at run time: the SDK's exported constants equal core's (and the list parameters the API's
 *   query schemas), and a sample of each SDK type, written as an exact literal of that type,
 *   has the schema's key set and passes the schema.
 */
import { describe, expect, it } from '@jest/globals';
import type { Static, TSchema } from '@sinclair/typebox';
import * as core from '@retention/core';
import * as sdk from '@retention/sdk';
import { CampaignListQuery } from '../../../services/api/src/routes/campaigns.js';
import { CancelSessionListQuery } from '../../../services/api/src/routes/cancel-sessions.js';
import { CustomerListQuery } from '../../../services/api/src/routes/customers.js';

/** Structurally identical, whatever the spelling (interface, intersection, mapped type). */
type Normalize<T> = T extends object ? { [K in keyof T]: Normalize<T[K]> } : T;
type Identical<A, B> =
  (<T>() => T extends Normalize<A> ? 1 : 2) extends <T>() => T extends Normalize<B> ? 1 : 2 ? true : false;
function assertIdentical<A, B>(..._proof: Identical<A, B> extends true ? [] : [never]): void {}

// Resources (spec part 2 with decisions.md's fields).
assertIdentical<sdk.Customer, core.Customer>();
assertIdentical<sdk.Subscription, core.Subscription>();
assertIdentical<sdk.SubscriptionSummary, core.SubscriptionSummary>();
assertIdentical<sdk.RecoveryCampaign, core.RecoveryCampaign>();
assertIdentical<sdk.CancelSession, core.CancelSession>();
assertIdentical<sdk.CustomerDetail, core.CustomerDetail>();
assertIdentical<sdk.CampaignDetail, core.CampaignDetail>();
assertIdentical<sdk.List<sdk.Customer>, Static<ReturnType<typeof core.ListSchema<typeof core.CustomerSchema>>>>();
assertIdentical<sdk.List<sdk.RecoveryCampaign>, core.ListEnvelope<core.RecoveryCampaign>>();
assertIdentical<sdk.Stats, core.Stats>();

// Enumerations.
assertIdentical<sdk.CampaignStatus, core.CampaignStatus>();
assertIdentical<sdk.RecoveredVia, core.RecoveredVia>();
assertIdentical<sdk.DeclineCategory, core.DeclineCategory>();
assertIdentical<sdk.CancelOutcome, core.CancelOutcome>();
assertIdentical<sdk.CancelReasonCode, core.CancelReasonCode>();
assertIdentical<sdk.SubscriptionStatus, core.SubscriptionStatus>();
assertIdentical<sdk.SubscriptionInterval, core.SubscriptionInterval>();

// Events (spec 6.2 and 6.4).
assertIdentical<sdk.EventType, core.EventType>();
assertIdentical<sdk.EventDataMap, core.EventDataMap>();
assertIdentical<sdk.WebhookEvent, core.WebhookPayload>();

// List filters: the SDK's parameters are the API's query parameters.
assertIdentical<keyof sdk.CustomerListParams, keyof Static<typeof CustomerListQuery>>();
assertIdentical<keyof sdk.CampaignListParams, keyof Static<typeof CampaignListQuery>>();
assertIdentical<keyof sdk.CancelSessionListParams, keyof Static<typeof CancelSessionListQuery>>();
assertIdentical<sdk.CampaignListParams['status'], Static<typeof CampaignListQuery>['status']>();
assertIdentical<sdk.CancelSessionListParams['outcome'], Static<typeof CancelSessionListQuery>['outcome']>();
// The exported parameter lists name every parameter (run time holds them to the API's schemas).
assertIdentical<(typeof sdk.CUSTOMER_LIST_PARAMS)[number], keyof sdk.CustomerListParams>();
assertIdentical<(typeof sdk.CAMPAIGN_LIST_PARAMS)[number], keyof sdk.CampaignListParams>();
assertIdentical<(typeof sdk.CANCEL_SESSION_LIST_PARAMS)[number], keyof sdk.CancelSessionListParams>();

// The check bites: a field the SDK lacks, an optional field, a wider type all fail it.
// @ts-expect-error a missing field
assertIdentical<Omit<sdk.Customer, 'tags'>, core.Customer>();
// @ts-expect-error an extra optional field
assertIdentical<sdk.Customer & { nickname?: string }, core.Customer>();
// @ts-expect-error a wider field
assertIdentical<Omit<sdk.Customer, 'name'> & { name: string | null | undefined }, core.Customer>();

const uuid = '6f1c2a52-9d1e-4a8e-b2c4-1f0e2d3c4b5a';
const at = '2026-03-07T09:15:02.123Z';

// Exact literals of the SDK types: the compiler refuses a missing or an extra key in each.
const customer: sdk.Customer = {
  id: uuid,
  object: 'customer',
  psp_customer_id: 'cus_1',
  email: 'ann@example.com',
  name: null,
  tags: ['vip'],
  created_at: at,
};
const subscription: sdk.Subscription = {
  id: uuid,
  object: 'subscription',
  psp_subscription_id: 'sub_1',
  status: 'active',
  plan_name: 'Pro',
  amount_cents: 4900,
  currency: 'usd',
  interval: 'month',
  customer_id: uuid,
  trial_end: null,
  current_period_end: at,
  canceled_at: null,
  created_at: at,
};
const summary: sdk.SubscriptionSummary = {
  id: uuid,
  object: 'subscription',
  psp_subscription_id: 'sub_1',
  status: 'active',
  plan_name: 'Pro',
  amount_cents: 4900,
  currency: 'usd',
  interval: 'month',
};
const campaign: sdk.RecoveryCampaign = {
  id: uuid,
  object: 'recovery_campaign',
  psp_invoice_id: 'in_1',
  amount_cents: 4900,
  currency: 'usd',
  status: 'recovered',
  decline_code: 'expired_card',
  decline_category: 'card_update_required',
  recovered_via: 'customer_update',
  first_failed_at: at,
  recovered_at: at,
  closed_at: at,
  customer_id: uuid,
  subscription_id: uuid,
};
const cancelSession: sdk.CancelSession = {
  id: uuid,
  object: 'cancel_session',
  customer_id: uuid,
  subscription_id: null,
  outcome: 'saved_pause',
  reason_code: 'unused',
  feedback: 'Back in spring',
  monthly_mrr_cents: 1900,
  currency: 'eur',
  created_at: at,
  ended_at: at,
};
const customerDetail: sdk.CustomerDetail = { ...customer, subscriptions: [subscription], recent_campaigns: [campaign] };
const campaignDetail: sdk.CampaignDetail = { ...campaign, customer, subscription: summary };
const stats: sdk.Stats = {
  object: 'stats',
  display_currency: 'usd',
  has_multiple_currencies: true,
  unconverted_currencies: ['xyz'],
  recovery: {
    opened: 7,
    in_flight: 1,
    recovered: 3,
    lost: 2,
    abandoned: 1,
    recovery_rate: 0.5,
    gross_recovery_rate: 0.4286,
    recovered_amount_cents: 4000,
    at_risk_amount_cents: 5000,
    lost_amount_cents: 4000,
    recovered_via: { retry: 1, customer_update: 1, spontaneous: 0, manual: 1 },
    by_decline_category: {
      soft: { opened: 3, recovered: 2 },
      card_update_required: { opened: 1, recovered: 1 },
      authentication_required: { opened: 0, recovered: 0 },
      revoked: { opened: 1, recovered: 0 },
      fraud: { opened: 1, recovered: 0 },
      unknown: { opened: 1, recovered: 0 },
    },
    median_days_to_recover: 1,
  },
  cancel_flow: {
    sessions: 6,
    saved: 3,
    canceled: 2,
    abandoned: 1,
    save_rate: 0.6,
    by_outcome: { saved_discount: 1, saved_pause: 1, saved_downgrade: 1, saved_other: 0, canceled: 2, abandoned: 1 },
    saved_mrr_cents: 4000,
  },
  generated_at: at,
};

const campaignData = { campaign_id: uuid, customer_email: 'ann@example.com', amount_cents: 4900, currency: 'usd' };
const cancelData = {
  session_id: uuid,
  reason_code: 'too_expensive',
  customer_email: 'ann@example.com',
  monthly_mrr_cents: 4900,
  currency: 'usd',
} as const;
/** Every shape of every event's data, the three of recovery.lost included. */
const eventSamples: { [T in sdk.EventType]: Array<sdk.EventData<T>> } = {
  'recovery.opened': [
    { ...campaignData, decline_code: 'insufficient_funds', decline_category: 'soft', psp_invoice_id: 'in_1' },
  ],
  'recovery.recovered': [{ ...campaignData, recovered_via: 'retry' }],
  'recovery.lost': [
    campaignData,
    { ...campaignData, reason: 'auto_close_stale' },
    { ...campaignData, source: 'dashboard' },
  ],
  'cancel.saved': [{ ...cancelData, outcome: 'saved_discount' }],
  'cancel.lost': [{ ...cancelData, outcome: 'canceled' }],
  'trial.reminder_sent': [
    { reminder_id: uuid, customer_email: 'ann@example.com', subscription_id: uuid, trial_end: at },
  ],
  'reactivation.sent': [{ reactivation_id: uuid, customer_email: 'ann@example.com', subscription_id: uuid }],
  'winback.recorded': [
    {
      winback_id: uuid,
      customer_email: 'ann@example.com',
      psp_subscription_id: 'sub_9',
      days_away: 40,
      amount_cents: 4900,
      currency: 'usd',
    },
  ],
};

/** Every key path a schema allows (`recovery.by_decline_category.soft.opened`), union members merged. */
function schemaKeyPaths(schema: TSchema, prefix = ''): string[] {
  const anyOf = (schema as { anyOf?: TSchema[] }).anyOf;
  if (anyOf) return [...new Set(anyOf.flatMap((member) => schemaKeyPaths(member, prefix)))].sort();
  if (schema.type === 'array') return schemaKeyPaths((schema as unknown as { items: TSchema }).items, `${prefix}[]`);
  const properties = (schema as { properties?: Record<string, TSchema> }).properties;
  if (!properties) return [];
  return Object.entries(properties)
    .flatMap(([key, property]) => [`${prefix}${key}`, ...schemaKeyPaths(property, `${prefix}${key}.`)])
    .sort();
}

/** The same for values: every key path present in the samples. */
function valueKeyPaths(values: unknown[], prefix = ''): string[] {
  const paths = new Set<string>();
  for (const value of values) {
    if (Array.isArray(value)) {
      for (const path of valueKeyPaths(value, `${prefix}[]`)) paths.add(path);
    } else if (typeof value === 'object' && value !== null) {
      for (const [key, child] of Object.entries(value)) {
        paths.add(`${prefix}${key}`);
        for (const path of valueKeyPaths([child], `${prefix}${key}.`)) paths.add(path);
      }
    }
  }
  return [...paths].sort();
}

describe('SDK resource types against the API schemas', () => {
  it.each([
    ['Customer', core.CustomerSchema, customer],
    ['Subscription', core.SubscriptionSchema, subscription],
    ['SubscriptionSummary', core.SubscriptionSummarySchema, summary],
    ['RecoveryCampaign', core.RecoveryCampaignSchema, campaign],
    ['CancelSession', core.CancelSessionSchema, cancelSession],
    ['CustomerDetail', core.CustomerDetailSchema, customerDetail],
    ['CampaignDetail', core.CampaignDetailSchema, campaignDetail],
    ['Stats', core.StatsSchema, stats],
  ] as Array<[string, TSchema, object]>)('%s has the schema key set and passes the schema', (_name, schema, sample) => {
    expect(valueKeyPaths([sample])).toEqual(schemaKeyPaths(schema));
    expect(core.compileValidator(schema)(sample)).toBeNull();
  });

  it('exports the field lists of the list rows in the API order', () => {
    expect(sdk.CUSTOMER_FIELDS).toEqual(Object.keys(core.CustomerSchema.properties));
    expect(sdk.CAMPAIGN_FIELDS).toEqual(Object.keys(core.RecoveryCampaignSchema.properties));
    expect(sdk.CANCEL_SESSION_FIELDS).toEqual(Object.keys(core.CancelSessionSchema.properties));
  });

  it("exports the parameters of each list, exactly the API's query parameters in its order", () => {
    expect(sdk.CUSTOMER_LIST_PARAMS).toEqual(Object.keys(CustomerListQuery.properties));
    expect(sdk.CAMPAIGN_LIST_PARAMS).toEqual(Object.keys(CampaignListQuery.properties));
    expect(sdk.CANCEL_SESSION_LIST_PARAMS).toEqual(Object.keys(CancelSessionListQuery.properties));
  });

  it('exports the enumerations of core', () => {
    expect(sdk.CAMPAIGN_STATUSES).toEqual(core.CAMPAIGN_STATUSES);
    expect(sdk.RECOVERED_VIA).toEqual(core.RECOVERED_VIA);
    expect(sdk.DECLINE_CATEGORIES).toEqual(core.DECLINE_CATEGORIES);
    expect(sdk.CANCEL_OUTCOMES).toEqual(core.CANCEL_OUTCOMES);
    expect(sdk.CANCEL_REASON_CODES).toEqual(core.CANCEL_REASON_CODES);
    expect(sdk.SUBSCRIPTION_STATUSES).toEqual(core.SUBSCRIPTION_STATUSES);
  });
});

describe('SDK event types against the event catalog', () => {
  it('knows exactly the catalog event types, and ping', () => {
    expect([...sdk.EVENT_TYPES].sort()).toEqual([...core.EVENT_TYPES].sort());
    expect(sdk.PING_EVENT_TYPE).toBe(core.PING_EVENT_TYPE);
    for (const type of core.EVENT_TYPES) expect(sdk.isEventType(type)).toBe(true);
    expect(sdk.isEventType('ping')).toBe(false);
  });

  it.each([...sdk.EVENT_TYPES])('%s: the SDK samples cover the catalog keys and pass its schema', (type) => {
    const samples: object[] = eventSamples[type];
    expect(valueKeyPaths(samples)).toEqual(schemaKeyPaths(core.EVENT_DATA_SCHEMAS[type]));
    expect(core.eventDataKeys(type).sort()).toEqual(valueKeyPaths(samples));
    for (const sample of samples) expect(core.buildEventData(type, sample as never)).toEqual(sample);
  });
});

describe('SDK error classes against the error catalog', () => {
  it('has a class for every error type the API sends, with its status', () => {
    for (const [type, { status }] of Object.entries(sdk.API_ERRORS)) {
      expect(core.ERROR_STATUS[type as core.ErrorType]).toBe(status);
    }
    // The rest of the catalog is the operator CLI's and the dashboard's: the read-only API never sends them.
    const operatorOnly = core.ERROR_TYPES.filter((type) => !Object.hasOwn(sdk.API_ERRORS, type));
    expect(operatorOnly.sort()).toEqual([
      'conflict',
      'forbidden',
      'invalid_credentials',
      'payload_too_large',
      'processor_unavailable',
    ]);
  });
});
