import type { AttemptOutcome, CancelOutcome } from '@retention/core/enums';
import type {
  CancelSession,
  Customer,
  RecoveryCampaign,
  Stats,
  Subscription,
  SubscriptionSummary,
} from '@retention/core/resources';

/**
 * The JSON of the dashboard API's data and insight pages (docs/dashboard-api.md, "Data pages"
 * and "Insights") that this package builds, as types. The dashboard reads its responses with
 * these same types (`@retention/db/dashboard-views`, type-only), so this module imports types
 * only, and only from core's modules that need nothing of Node: the browser app's compile
 * loads it.
 */

/** A campaigns list row: the API's campaign plus its customer's email. */
export type CampaignListRow = RecoveryCampaign & { customer_email: string };

/** A cancel sessions list row: the API's cancel session plus its customer's email. */
export type CancelSessionListRow = CancelSession & { customer_email: string };

export interface TimelineDelivery {
  id: string;
  endpoint_id: string;
  endpoint_name: string;
  status: string;
  attempt_count: number;
  /** The attempts sent: `attempt_count` less the skipped lines, which take a number each. */
  attempts_sent: number;
  last_http_status: number | null;
  /** The outcome of its last log line (`failed` while a retry is due, say); null before any. */
  last_outcome: AttemptOutcome | null;
  /**
   * That line's error when it failed or was interrupted (`connection refused`, `HTTP 503`, `timed
   * out after 10000 ms`); null otherwise.
   */
  last_error: string | null;
  /**
   * Why a `skipped` delivery was skipped (its skipped log line, without "skipped: "); null
   * otherwise.
   */
  skipped_reason: string | null;
  /** When it succeeded, failed for good or was skipped; null while pending. */
  completed_at: string | null;
  /** Pending: when its next attempt is due (or was, for one in flight); null once completed. */
  next_attempt_at: string | null;
  /**
   * The URL its last log line was sent to (or, skipped, would have been) when that is not the
   * endpoint's URL now (it was edited since); null when they are the same or there is no line.
   */
  sent_to_url: string | null;
}

/** Why an event was recorded and not sent (migration 0023): the only cause on record. */
export type EventNotSentReason = 'processor_not_connected';

export type TimelineEntry =
  | {
      kind: 'event';
      at: string;
      event_id: string;
      type: string;
      source: string | null;
      /** Still in the outbox: the dispatcher has not made its deliveries yet. */
      queued: boolean;
      /** Not sent, and never will be: the workspace's payment processor was not connected. */
      not_sent_reason: EventNotSentReason | null;
      deliveries: TimelineDelivery[];
    }
  | {
      kind: 'action';
      at: string;
      action: string;
      /**
       * `type`: a person on the dashboard (`user`) or the operator CLI (`operator`, for whom `user_id`
       * is `--actor`'s); `email`: that person's address, kept after they leave (migration 0040).
       */
      actor: { type: string; user_id: string | null; label: string | null; email: string | null };
    }
  | {
      /**
       * A payment attempt of the campaign's invoice that failed, as the processor reported it
       * (docs/processor.md, "Payment attempts"): its number in the processor's count, its decline.
       */
      kind: 'payment_attempt';
      at: string;
      attempt_number: number;
      decline_code: string;
      decline_category: string;
    };

/**
 * When the processor will try the invoice's payment again (`at`; null: no retry is scheduled),
 * as its event of `reported_at` said.
 */
export interface NextPaymentAttempt {
  at: string | null;
  reported_at: string;
}

export type CampaignDetailView = RecoveryCampaign & {
  customer: Customer | null;
  subscription: SubscriptionSummary | null;
  closed_by_user_id: string | null;
  timeline: TimelineEntry[];
  /** For a campaign in flight the processor told us of; null otherwise. */
  next_payment_attempt: NextPaymentAttempt | null;
};

/** A win-back as the customer page lists it. */
export interface WinbackSummary {
  id: string;
  psp_subscription_id: string;
  days_away: number;
  amount_cents: number;
  currency: string;
  recorded_at: string;
}

export type CustomerDetailView = Customer & {
  subscriptions: Subscription[];
  campaigns: CampaignListRow[];
  cancel_sessions: CancelSessionListRow[];
  winbacks: WinbackSummary[];
};

export type CancelSessionDetailView = CancelSession & {
  customer: Customer;
  subscription: Subscription | null;
  /**
   * Its events (`cancel.saved`, `cancel.lost`) with their deliveries, as a campaign's timeline has.
   */
  timeline: Extract<TimelineEntry, { kind: 'event' }>[];
};

export const OVERVIEW_PERIODS = [
  'last_30_days',
  'last_90_days',
  'last_12_months',
  'all_time',
  'this_month',
  'last_month',
  'custom',
] as const;
export type OverviewPeriod = (typeof OVERVIEW_PERIODS)[number];

export interface MonthlyCampaigns {
  month: string; // YYYY-MM
  opened: number;
  recovered: number;
  failed_amount_cents: number;
  recovered_amount_cents: number;
  /**
   * Recovered, lost or abandoned: what `recovery_rate` is of (a rate over 1 campaign is not one
   * over 40).
   */
  closed: number;
  recovery_rate: number | null;
}

export interface MonthlySessions {
  month: string;
  by_outcome: Record<CancelOutcome, number>;
}

/** A rate the overview converted money with: units of `currency` per US dollar. */
export interface ExchangeRate {
  currency: string;
  /** A decimal as text, exact (`0.92`, `1310`). */
  per_usd: string;
  /** When the operator set it (`fx set`), or null for the service's shipped default, which has no date. */
  set_at: string | null;
}

/** A decline category's campaigns of the period, with their money in the display currency. */
export interface DeclineCategoryTotals {
  decline_category: string;
  opened: number;
  recovered: number;
  /** Every campaign of the category that opened in the period, whatever became of it. */
  failed_amount_cents: number;
  recovered_amount_cents: number;
}

/** A decline code's campaigns of the period (the most frequent codes), as DeclineCategoryTotals. */
export interface DeclineCodeTotals extends DeclineCategoryTotals {
  decline_code: string;
}

/**
 * The campaigns that closed in the period (by the UTC day of `closed_at`), whenever they opened:
 * money won back or lost in it, beside the cohort of `stats`, not in place of it. Money in the
 * display currency, converted as the KPIs' is.
 */
export interface ClosedInPeriod {
  recovered: number;
  recovered_amount_cents: number;
  /** Lost or abandoned, as `stats.recovery.lost_amount_cents` counts both. */
  lost: number;
  lost_amount_cents: number;
}

export interface Overview {
  object: 'overview';
  period: OverviewPeriod;
  /** The first UTC day of the period, or null for all time. */
  since: string | null;
  /** The UTC day the period ends before (`last_month`: the first of this month), or null for up to now. */
  until: string | null;
  stats: Stats;
  closed_in_period: ClosedInPeriod;
  /** Each decline category of the period, in core's order of DECLINE_CATEGORIES. */
  decline_categories: DeclineCategoryTotals[];
  /** The period's most frequent decline codes (at most DECLINE_CODE_LIMIT), most campaigns first. */
  decline_codes: DeclineCodeTotals[];
  /** How many campaigns of the period the codes beyond `decline_codes` account for. */
  other_decline_codes: { codes: number; opened: number; failed_amount_cents: number };
  exchange_rates: ExchangeRate[];
  campaigns_by_month: MonthlyCampaigns[];
  cancel_sessions_by_month: MonthlySessions[];
  cancel_reasons: Array<{ reason_code: string; sessions: number }>;
  unconverted_currencies: string[];
  generated_at: string;
}
