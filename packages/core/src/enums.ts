/**
 * The closed sets of values of the domain. Each array is the single source for its set:
 * TypeScript types, JSON schemas, CHECK constraints in the migrations and CLI validation
 * are all derived from these.
 */

export const CAMPAIGN_STATUSES = ['in_flight', 'recovered', 'lost', 'abandoned'] as const;
export type CampaignStatus = (typeof CAMPAIGN_STATUSES)[number];

export const RECOVERED_VIA = ['retry', 'customer_update', 'spontaneous', 'manual'] as const;
export type RecoveredVia = (typeof RECOVERED_VIA)[number];

export const CANCEL_OUTCOMES = [
  'saved_discount',
  'saved_pause',
  'saved_downgrade',
  'saved_other',
  'canceled',
  'abandoned',
] as const;
export type CancelOutcome = (typeof CANCEL_OUTCOMES)[number];

export const SAVED_OUTCOMES = [
  'saved_discount',
  'saved_pause',
  'saved_downgrade',
  'saved_other',
] as const satisfies readonly CancelOutcome[];

export function isSavedOutcome(outcome: CancelOutcome): boolean {
  return (SAVED_OUTCOMES as readonly string[]).includes(outcome);
}

/** Stripe's cancellation feedback set. */
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

export const SUBSCRIPTION_INTERVALS = ['month', 'year'] as const;
export type SubscriptionInterval = (typeof SUBSCRIPTION_INTERVALS)[number];

export const USER_ROLES = ['owner', 'admin', 'member'] as const;
export type UserRole = (typeof USER_ROLES)[number];

/** Roles allowed to add, edit, toggle or delete webhook endpoints (docs/dashboard-api.md, "Roles"). */
export const WEBHOOK_MANAGER_ROLES = ['owner', 'admin'] as const satisfies readonly UserRole[];

/** Why an endpoint is off: an owner or admin turned it off, or 10 failures in a row did. */
export const ENDPOINT_DISABLED_REASONS = ['manual', 'consecutive_failures'] as const;
export type EndpointDisabledReason = (typeof ENDPOINT_DISABLED_REASONS)[number];

/** A delivery (one event to one endpoint): pending until it succeeds, runs out of attempts or is skipped. */
export const DELIVERY_STATUSES = ['pending', 'succeeded', 'failed', 'skipped'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

/** Each row of the delivery log. `interrupted`: the worker died before it could record a result. */
export const ATTEMPT_OUTCOMES = ['succeeded', 'failed', 'skipped', 'interrupted'] as const;
export type AttemptOutcome = (typeof ATTEMPT_OUTCOMES)[number];

export const PROCESSOR_STATUSES = ['connected', 'disconnected'] as const;
export type ProcessorStatus = (typeof PROCESSOR_STATUSES)[number];

export const DECLINE_CATEGORIES = [
  'soft',
  'card_update_required',
  'authentication_required',
  'revoked',
  'fraud',
  'unknown',
] as const;
export type DeclineCategory = (typeof DECLINE_CATEGORIES)[number];

/** A zero for each value of a closed set: the start of a tally that lists every value. */
export function zeroCounts<K extends string>(keys: readonly K[]): Record<K, number> {
  return Object.fromEntries(keys.map((key) => [key, 0])) as Record<K, number>;
}

export function isOneOf<T extends string>(values: readonly T[], value: unknown): value is T {
  return typeof value === 'string' && (values as readonly string[]).includes(value);
}

/**
 * What the security log records (docs/dashboard-api.md): every change to a token, an endpoint
 * or its secret, the team, the workspace or the processor connection, and the campaign actions
 * taken by hand. Named `<subject>.<verb>`.
 */
export const SECURITY_ACTIONS = [
  'token.created',
  'token.revoked',
  'token.limit_changed',
  'webhook.created',
  'webhook.updated',
  'webhook.deleted',
  'webhook.enabled',
  'webhook.disabled',
  'webhook.secret_rolled',
  'webhook.secret_overlap_ended',
  'webhook.deliveries_requeued',
  'team.invited',
  'team.invitation_revoked',
  'team.invitation_link_renewed',
  'team.joined',
  'team.role_changed',
  'team.removed',
  'account.password_changed',
  'account.reset_link_created',
  'account.reset_link_revoked',
  'account.password_reset',
  'account.signed_out_everywhere',
  'account.session_revoked',
  'workspace.updated',
  'processor.connected',
  'processor.disconnected',
  'processor.key_rejected',
  'processor.key_removed',
  'processor.mode_switched',
  'processor.events_retried',
  'campaign.marked_recovered',
  'campaign.marked_lost',
] as const;
export type SecurityAction = (typeof SECURITY_ACTIONS)[number];

/** Who made a change: a signed-in user, an operator at the CLI, the processor, or the service itself. */
export const SECURITY_ACTOR_TYPES = ['user', 'operator', 'processor', 'system'] as const;
export type SecurityActorType = (typeof SECURITY_ACTOR_TYPES)[number];
