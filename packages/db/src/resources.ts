import {
  toIsoMillis,
  toIsoMillisOrNull,
  type CampaignStatus,
  type CancelOutcome,
  type CancelReasonCode,
  type CancelSession,
  type Customer,
  type DeclineCategory,
  type RecoveredVia,
  type RecoveryCampaign,
  type Subscription,
  type SubscriptionInterval,
  type SubscriptionStatus,
  type SubscriptionSummary,
} from '@retention/core';

/**
 * Rows as Postgres returns them, and their API representation (docs/api.md, "Resources", and
 * decisions.md). Every resource leaves the database through one of these functions.
 */

export interface CustomerRow {
  id: string;
  workspace_id: string;
  psp_customer_id: string;
  email: string;
  name: string | null;
  tags: string[];
  created_at: Date;
}

export interface SubscriptionRow {
  id: string;
  workspace_id: string;
  customer_id: string;
  psp_subscription_id: string;
  status: SubscriptionStatus;
  plan_name: string;
  amount_cents: number;
  currency: string;
  interval: SubscriptionInterval;
  trial_end: Date | null;
  current_period_end: Date | null;
  canceled_at: Date | null;
  created_at: Date;
}

export interface CampaignRow {
  id: string;
  workspace_id: string;
  customer_id: string;
  subscription_id: string;
  psp_invoice_id: string;
  amount_cents: number;
  currency: string;
  status: CampaignStatus;
  decline_code: string;
  decline_category: DeclineCategory;
  recovered_via: RecoveredVia | null;
  first_failed_at: Date;
  recovered_at: Date | null;
  closed_at: Date | null;
}

export interface CancelSessionRow {
  id: string;
  workspace_id: string;
  customer_id: string;
  subscription_id: string | null;
  outcome: CancelOutcome;
  reason_code: CancelReasonCode;
  feedback: string | null;
  monthly_mrr_cents: number;
  currency: string;
  created_at: Date;
  ended_at: Date;
}

export function toCustomer(row: CustomerRow): Customer {
  return {
    id: row.id,
    object: 'customer',
    psp_customer_id: row.psp_customer_id,
    email: row.email,
    name: row.name,
    tags: row.tags,
    created_at: toIsoMillis(row.created_at),
  };
}

export function toSubscriptionSummary(row: SubscriptionRow): SubscriptionSummary {
  return {
    id: row.id,
    object: 'subscription',
    psp_subscription_id: row.psp_subscription_id,
    status: row.status,
    plan_name: row.plan_name,
    amount_cents: row.amount_cents,
    currency: row.currency,
    interval: row.interval,
  };
}

export function toSubscription(row: SubscriptionRow): Subscription {
  return {
    ...toSubscriptionSummary(row),
    customer_id: row.customer_id,
    trial_end: toIsoMillisOrNull(row.trial_end),
    current_period_end: toIsoMillisOrNull(row.current_period_end),
    canceled_at: toIsoMillisOrNull(row.canceled_at),
    created_at: toIsoMillis(row.created_at),
  };
}

export function toCampaign(row: CampaignRow): RecoveryCampaign {
  return {
    id: row.id,
    object: 'recovery_campaign',
    psp_invoice_id: row.psp_invoice_id,
    amount_cents: row.amount_cents,
    currency: row.currency,
    status: row.status,
    decline_code: row.decline_code,
    decline_category: row.decline_category,
    recovered_via: row.recovered_via,
    first_failed_at: toIsoMillis(row.first_failed_at),
    recovered_at: toIsoMillisOrNull(row.recovered_at),
    closed_at: toIsoMillisOrNull(row.closed_at),
    customer_id: row.customer_id,
    subscription_id: row.subscription_id,
  };
}

export function toCancelSession(row: CancelSessionRow): CancelSession {
  return {
    id: row.id,
    object: 'cancel_session',
    customer_id: row.customer_id,
    subscription_id: row.subscription_id,
    outcome: row.outcome,
    reason_code: row.reason_code,
    feedback: row.feedback,
    monthly_mrr_cents: row.monthly_mrr_cents,
    currency: row.currency,
    created_at: toIsoMillis(row.created_at),
    ended_at: toIsoMillis(row.ended_at),
  };
}
