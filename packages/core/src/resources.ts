import { Type, type Static, type TSchema } from '@sinclair/typebox';
import {
  CAMPAIGN_STATUSES,
  CANCEL_OUTCOMES,
  CANCEL_REASON_CODES,
  DECLINE_CATEGORIES,
  RECOVERED_VIA,
  SUBSCRIPTION_INTERVALS,
  SUBSCRIPTION_STATUSES,
} from './enums.js';
import { Currency, Email, MinorUnits, Nullable, OneOf, Timestamp, Uuid } from './schema-helpers.js';

/**
 * The resources of the REST API (docs/api.md, "Resources"), as JSON Schemas
 * that are also the TypeScript types. The API's responses, its OpenAPI document and the
 * SDK's types all come from these.
 */

const strict = { additionalProperties: false } as const;

export const CustomerSchema = Type.Object(
  {
    id: Uuid(),
    object: Type.Literal('customer'),
    psp_customer_id: Type.String({ description: "The payment processor's customer id" }),
    email: Email(),
    name: Nullable(Type.String()),
    tags: Type.Array(Type.String()),
    created_at: Timestamp(),
  },
  { ...strict, $id: 'Customer' },
);
export type Customer = Static<typeof CustomerSchema>;

export const SubscriptionSummarySchema = Type.Object(
  {
    id: Uuid(),
    object: Type.Literal('subscription'),
    psp_subscription_id: Type.String(),
    status: OneOf(SUBSCRIPTION_STATUSES),
    plan_name: Type.String(),
    amount_cents: MinorUnits(),
    currency: Currency(),
    interval: OneOf(SUBSCRIPTION_INTERVALS),
  },
  { ...strict, $id: 'SubscriptionSummary' },
);
export type SubscriptionSummary = Static<typeof SubscriptionSummarySchema>;

export const SubscriptionSchema = Type.Object(
  {
    ...SubscriptionSummarySchema.properties,
    customer_id: Uuid(),
    trial_end: Nullable(Timestamp()),
    current_period_end: Nullable(Timestamp()),
    canceled_at: Nullable(Timestamp()),
    created_at: Timestamp(),
  },
  { ...strict, $id: 'Subscription' },
);
export type Subscription = Static<typeof SubscriptionSchema>;

export const RecoveryCampaignSchema = Type.Object(
  {
    id: Uuid(),
    object: Type.Literal('recovery_campaign'),
    psp_invoice_id: Type.String(),
    amount_cents: MinorUnits(),
    currency: Currency(),
    status: OneOf(CAMPAIGN_STATUSES),
    decline_code: Type.String(),
    decline_category: OneOf(DECLINE_CATEGORIES),
    recovered_via: Nullable(OneOf(RECOVERED_VIA)),
    first_failed_at: Timestamp(),
    recovered_at: Nullable(Timestamp()),
    closed_at: Nullable(Timestamp()),
    customer_id: Uuid(),
    subscription_id: Uuid(),
  },
  { ...strict, $id: 'RecoveryCampaign' },
);
export type RecoveryCampaign = Static<typeof RecoveryCampaignSchema>;

export const CancelSessionSchema = Type.Object(
  {
    id: Uuid(),
    object: Type.Literal('cancel_session'),
    customer_id: Uuid(),
    subscription_id: Nullable(Uuid()),
    outcome: OneOf(CANCEL_OUTCOMES),
    reason_code: OneOf(CANCEL_REASON_CODES),
    feedback: Nullable(Type.String()),
    monthly_mrr_cents: MinorUnits(),
    currency: Currency(),
    created_at: Timestamp(),
    ended_at: Timestamp(),
  },
  { ...strict, $id: 'CancelSession' },
);
export type CancelSession = Static<typeof CancelSessionSchema>;

export const CustomerDetailSchema = Type.Object(
  {
    ...CustomerSchema.properties,
    subscriptions: Type.Array(SubscriptionSchema),
    recent_campaigns: Type.Array(RecoveryCampaignSchema, { maxItems: 5 }),
  },
  { ...strict, $id: 'CustomerDetail' },
);
export type CustomerDetail = Static<typeof CustomerDetailSchema>;

export const CampaignDetailSchema = Type.Object(
  {
    ...RecoveryCampaignSchema.properties,
    customer: CustomerSchema,
    subscription: SubscriptionSummarySchema,
  },
  { ...strict, $id: 'RecoveryCampaignDetail' },
);
export type CampaignDetail = Static<typeof CampaignDetailSchema>;

export const PAGE_SIZE = 50;

export const ListSchema = <T extends TSchema>(row: T, $id: string) =>
  Type.Object(
    {
      object: Type.Literal('list'),
      data: Type.Array(row),
      has_more: Type.Boolean(),
      next_cursor: Nullable(Timestamp('Ordering timestamp of the last row returned')),
    },
    { ...strict, $id },
  );

export interface ListEnvelope<T> {
  object: 'list';
  data: T[];
  has_more: boolean;
  next_cursor: string | null;
}

const Rate = () =>
  Nullable(Type.Number({ minimum: 0, maximum: 1, description: 'Rounded to 4 places; null when the denominator is 0' }));
const Count = () => Type.Integer({ minimum: 0 });

/** An object with one property per key, all of one schema; typed by its keys, not as a string map. */
const keyedBy = <T extends string, S extends TSchema>(keys: readonly T[], value: S) =>
  Type.Object(Object.fromEntries(keys.map((key) => [key, value])) as Record<T, S>, strict);

const countsBy = <T extends string>(keys: readonly T[]) => keyedBy(keys, Count());

export const StatsSchema = Type.Object(
  {
    object: Type.Literal('stats'),
    display_currency: Currency(),
    has_multiple_currencies: Type.Boolean(),
    unconverted_currencies: Type.Array(Currency(), {
      description: 'Currencies without an FX rate: their amounts are left out of the normalised totals',
    }),
    recovery: Type.Object(
      {
        opened: Count(),
        in_flight: Count(),
        recovered: Count(),
        lost: Count(),
        abandoned: Count(),
        recovery_rate: Rate(),
        gross_recovery_rate: Rate(),
        recovered_amount_cents: MinorUnits(),
        at_risk_amount_cents: MinorUnits(),
        lost_amount_cents: MinorUnits(),
        recovered_via: countsBy(RECOVERED_VIA),
        by_decline_category: keyedBy(DECLINE_CATEGORIES, Type.Object({ opened: Count(), recovered: Count() }, strict)),
        median_days_to_recover: Nullable(Type.Number({ minimum: 0 })),
      },
      strict,
    ),
    cancel_flow: Type.Object(
      {
        sessions: Count(),
        saved: Count(),
        canceled: Count(),
        abandoned: Count(),
        save_rate: Rate(),
        by_outcome: countsBy(CANCEL_OUTCOMES),
        saved_mrr_cents: MinorUnits(),
      },
      strict,
    ),
    generated_at: Timestamp(),
  },
  { ...strict, $id: 'Stats' },
);
export type Stats = Static<typeof StatsSchema>;
