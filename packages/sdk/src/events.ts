import type { CancelOutcome, CancelReasonCode, DeclineCategory, RecoveredVia } from './resources.js';

/**
 * The webhook events and the dashboard's test event (the receiver's guide, "Event types"), as a union
 * discriminated by `type`. A test holds these equal to the service's event catalog.
 */

export const EVENT_TYPES = [
  'recovery.opened',
  'recovery.recovered',
  'recovery.lost',
  'cancel.saved',
  'cancel.lost',
  'trial.reminder_sent',
  'reactivation.sent',
  'winback.recorded',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/** The type of the synthetic event sent by the dashboard's Send test action. */
export const PING_EVENT_TYPE = 'ping';

interface CampaignEventData {
  /** The service's campaign UUID: `client.campaigns.retrieve(campaign_id)`. */
  campaign_id: string;
  customer_email: string;
  amount_cents: number;
  currency: string;
}

interface CancelEventData {
  /** The service's cancel-session UUID. */
  session_id: string;
  reason_code: CancelReasonCode;
  customer_email: string;
  monthly_mrr_cents: number;
  currency: string;
}

export interface EventDataMap {
  'recovery.opened': CampaignEventData & {
    decline_code: string;
    decline_category: DeclineCategory;
    psp_invoice_id: string;
  };
  'recovery.recovered': CampaignEventData & { recovered_via: RecoveredVia };
  /**
   * `reason: 'auto_close_stale'` when a stale campaign was closed automatically,
   * `source: 'dashboard'` when an operator marked it lost, neither when the processor gave up.
   */
  'recovery.lost':
    | CampaignEventData
    | (CampaignEventData & { reason: 'auto_close_stale' })
    | (CampaignEventData & { source: 'dashboard' });
  'cancel.saved': CancelEventData & { outcome: Exclude<CancelOutcome, 'canceled' | 'abandoned'> };
  'cancel.lost': CancelEventData & { outcome: 'canceled' };
  'trial.reminder_sent': {
    reminder_id: string;
    customer_email: string;
    subscription_id: string;
    /** When the trial ends (ISO 8601). */
    trial_end: string;
  };
  'reactivation.sent': { reactivation_id: string; customer_email: string; subscription_id: string };
  'winback.recorded': {
    winback_id: string;
    customer_email: string;
    psp_subscription_id: string;
    days_away: number;
    amount_cents: number;
    currency: string;
  };
}

export type EventData<T extends EventType = EventType> = EventDataMap[T];

/** One event as delivered: `switch (event.type)` narrows `data`. */
export type WebhookEvent =
  | { [T in EventType]: { type: T; created_at: string; data: EventDataMap[T] } }[EventType]
  | { type: typeof PING_EVENT_TYPE; created_at: string; data: { test: true } };

export type WebhookEventType = WebhookEvent['type'];

export function isEventType(value: unknown): value is EventType {
  return typeof value === 'string' && (EVENT_TYPES as readonly string[]).includes(value);
}
