/**
 * The API's resources as TypeScript types. They are written out by hand, so the package
 * has no dependency, and a test holds them equal to the schemas the API validates its
 * responses with: a field added to the API and not here fails the build.
 *
 * Timestamps are ISO 8601 strings in UTC with milliseconds (`2026-03-07T09:15:02.123Z`);
 * amounts are integers in minor currency units; currencies are lowercase ISO 4217 codes.
 */

export const CAMPAIGN_STATUSES = ['in_flight', 'recovered', 'lost', 'abandoned'] as const;
export type CampaignStatus = (typeof CAMPAIGN_STATUSES)[number];

export const RECOVERED_VIA = ['retry', 'customer_update', 'spontaneous', 'manual'] as const;
export type RecoveredVia = (typeof RECOVERED_VIA)[number];

export const DECLINE_CATEGORIES = [
  'soft',
  'card_update_required',
  'authentication_required',
  'revoked',
  'fraud',
  'unknown',
] as const;
export type DeclineCategory = (typeof DECLINE_CATEGORIES)[number];

export const CANCEL_OUTCOMES = [
  'saved_discount',
  'saved_pause',
  'saved_downgrade',
  'saved_other',
  'canceled',
  'abandoned',
] as const;
export type CancelOutcome = (typeof CANCEL_OUTCOMES)[number];

export const CANCEL_REASON_CODES = [
  'too_expensive',
  'missing_features',
  'switched_service',
  'unused',
  'customer_service',
  'too_complex',
  'low_quality',
  'other',
] as const;
export type CancelReasonCode = (typeof CANCEL_REASON_CODES)[number];

export const SUBSCRIPTION_STATUSES = ['trialing', 'active', 'past_due', 'paused', 'canceled'] as const;
export type SubscriptionStatus = (typeof SUBSCRIPTION_STATUSES)[number];

export type SubscriptionInterval = 'month' | 'year';

export interface Customer {
  /** The service's UUID (not the payment processor's id). */
  id: string;
  object: 'customer';
  psp_customer_id: string;
  email: string;
  name: string | null;
  /** Stored trimmed and lowercase. */
  tags: string[];
  /** Orders the customer list; the list's `next_cursor` carries it. */
  created_at: string;
}

export interface SubscriptionSummary {
  id: string;
  object: 'subscription';
  psp_subscription_id: string;
  status: SubscriptionStatus;
  plan_name: string;
  amount_cents: number;
  currency: string;
  interval: SubscriptionInterval;
}

export interface Subscription extends SubscriptionSummary {
  customer_id: string;
  trial_end: string | null;
  current_period_end: string | null;
  canceled_at: string | null;
  created_at: string;
}

export interface RecoveryCampaign {
  id: string;
  object: 'recovery_campaign';
  psp_invoice_id: string;
  amount_cents: number;
  currency: string;
  status: CampaignStatus;
  decline_code: string;
  decline_category: DeclineCategory;
  /** Null until recovered. */
  recovered_via: RecoveredVia | null;
  /** Orders the campaign list; the list's `next_cursor` carries it. */
  first_failed_at: string;
  recovered_at: string | null;
  /** Null while the campaign is open (`in_flight`). */
  closed_at: string | null;
  customer_id: string;
  subscription_id: string;
}

export interface CancelSession {
  id: string;
  object: 'cancel_session';
  customer_id: string;
  subscription_id: string | null;
  outcome: CancelOutcome;
  reason_code: CancelReasonCode;
  /** The customer's free-text feedback, if any. */
  feedback: string | null;
  monthly_mrr_cents: number;
  currency: string;
  /** Orders the cancel-session list; the list's `next_cursor` carries it. */
  created_at: string;
  ended_at: string;
}

/** `client.customers.retrieve(id)`: the customer with its subscriptions and 5 newest campaigns. */
export interface CustomerDetail extends Customer {
  subscriptions: Subscription[];
  recent_campaigns: RecoveryCampaign[];
}

/** `client.campaigns.retrieve(id)`: the campaign with its customer and subscription summary. */
export interface CampaignDetail extends RecoveryCampaign {
  customer: Customer;
  subscription: SubscriptionSummary;
}

/** One page of a list endpoint: up to 50 rows, newest first. */
export interface List<T> {
  object: 'list';
  data: T[];
  has_more: boolean;
  /** The ordering timestamp of the last row; send it as `cursor` for the next page. Null when `data` is empty. */
  next_cursor: string | null;
}

interface CategoryCounts {
  opened: number;
  recovered: number;
}

/** `client.stats.retrieve()`: the dashboard KPIs. Rates are 0..1 with 4 decimals, null when undefined. */
export interface Stats {
  object: 'stats';
  /** The currency of every normalised amount below. */
  display_currency: string;
  has_multiple_currencies: boolean;
  /** Currencies without an exchange rate: their amounts are left out of the totals. */
  unconverted_currencies: string[];
  recovery: {
    opened: number;
    in_flight: number;
    recovered: number;
    lost: number;
    abandoned: number;
    /** recovered / (recovered + lost + abandoned) */
    recovery_rate: number | null;
    /** recovered / opened */
    gross_recovery_rate: number | null;
    recovered_amount_cents: number;
    /** The amount of the campaigns still in flight. */
    at_risk_amount_cents: number;
    lost_amount_cents: number;
    recovered_via: Record<RecoveredVia, number>;
    by_decline_category: Record<DeclineCategory, CategoryCounts>;
    median_days_to_recover: number | null;
  };
  cancel_flow: {
    sessions: number;
    saved: number;
    canceled: number;
    abandoned: number;
    /** saved / (saved + canceled) */
    save_rate: number | null;
    by_outcome: Record<CancelOutcome, number>;
    saved_mrr_cents: number;
  };
  generated_at: string;
}

/** The fields of each list row, in the API's order: handy for CSV headers and projections. */
export const CUSTOMER_FIELDS = [
  'id',
  'object',
  'psp_customer_id',
  'email',
  'name',
  'tags',
  'created_at',
] as const satisfies readonly (keyof Customer)[];

export const CAMPAIGN_FIELDS = [
  'id',
  'object',
  'psp_invoice_id',
  'amount_cents',
  'currency',
  'status',
  'decline_code',
  'decline_category',
  'recovered_via',
  'first_failed_at',
  'recovered_at',
  'closed_at',
  'customer_id',
  'subscription_id',
] as const satisfies readonly (keyof RecoveryCampaign)[];

export const CANCEL_SESSION_FIELDS = [
  'id',
  'object',
  'customer_id',
  'subscription_id',
  'outcome',
  'reason_code',
  'feedback',
  'monthly_mrr_cents',
  'currency',
  'created_at',
  'ended_at',
] as const satisfies readonly (keyof CancelSession)[];
