import {
  SECURITY_ACTIONS,
  type AttemptOutcome,
  type CampaignStatus,
  type CancelOutcome,
  type CancelReasonCode,
  type DeclineCategory,
  type DeliveryStatus,
  type RecoveredVia,
  type SecurityAction,
  type SubscriptionStatus,
  type UserRole,
} from '@retention/core/enums';
import { humanize } from './format.js';

/**
 * Plain-language names for the service's codes, in one place for every page (the timeline,
 * the campaign lists and pages, the confirmations, the endpoint form's event checkboxes, the
 * security log, every status badge and every filter's options).
 * A page shows the label and keeps the code beside it, quieter, where an engineer needs it
 * (docs/dashboard-ui.md, "Labels").
 */

/** The eight event types of docs/webhooks.md, "Event types", as an owner would say what happened. */
export const EVENT_TYPE_LABELS: Readonly<Record<string, string>> = {
  'recovery.opened': 'Payment failed, recovery started',
  'recovery.recovered': 'Payment recovered',
  'recovery.lost': 'Payment lost',
  'cancel.saved': 'Cancellation saved',
  'cancel.lost': 'Customer canceled',
  'trial.reminder_sent': 'Trial reminder sent',
  'reactivation.sent': 'Reactivation offer sent',
  'winback.recorded': 'Customer won back',
};

/**
 * What each event type means, in a sentence (service-spec.md 6.2's "Meaning", docs/webhooks.md's
 * "when"): the endpoint form shows it under the type's code, for whoever picks what to send.
 */
export const EVENT_TYPE_DESCRIPTIONS: Readonly<Record<string, string>> = {
  'recovery.opened': 'A payment failed for the first time on an invoice, and a recovery campaign opened.',
  'recovery.recovered': 'A recovery campaign ended with the payment received.',
  'recovery.lost': 'A recovery campaign ended without the payment.',
  'cancel.saved': 'A customer in the cancel flow accepted an offer and stayed.',
  'cancel.lost': 'A customer in the cancel flow canceled anyway.',
  'trial.reminder_sent': 'An email reminding a customer that their trial ends soon was sent.',
  'reactivation.sent': 'A win-back email was sent to a customer who had canceled.',
  'winback.recorded': 'A customer who had canceled subscribed again.',
};

/**
 * Stripe's decline codes, each as its documentation explains it, every code that
 * @retention/core's decline-categories.ts sorts into a category. A code not listed (a processor
 * may send any) is shown humanized.
 */
export const DECLINE_CODE_LABELS: Readonly<Record<string, string>> = {
  insufficient_funds: 'Insufficient funds',
  card_velocity_exceeded: 'Card limit exceeded',
  withdrawal_count_limit_exceeded: 'Withdrawal limit exceeded',
  generic_decline: 'Declined by the bank',
  do_not_honor: 'Declined by the bank (do not honor)',
  try_again_later: 'Bank asked to try again later',
  issuer_not_available: 'Bank unreachable',
  processing_error: 'Processing error',
  reenter_transaction: 'Bank asked to retry',
  approve_with_id: 'Bank could not approve',
  expired_card: 'Expired card',
  incorrect_number: 'Incorrect card number',
  invalid_number: 'Invalid card number',
  incorrect_cvc: 'Incorrect security code',
  invalid_cvc: 'Invalid security code',
  invalid_expiry_month: 'Invalid expiry month',
  invalid_expiry_year: 'Invalid expiry year',
  incorrect_zip: 'Incorrect postal code',
  card_not_supported: 'Card not supported',
  currency_not_supported: 'Currency not supported by the card',
  invalid_account: 'Invalid card account',
  new_account_information_available: 'Card has been replaced',
  restricted_card: 'Restricted card',
  transaction_not_allowed: 'Payment not allowed on this card',
  do_not_try_again: 'Bank said not to retry',
  pin_try_exceeded: 'Too many PIN attempts',
  authentication_required: 'Customer must authenticate',
  revocation_of_authorization: 'Customer revoked the authorization',
  revocation_of_all_authorizations: 'Customer revoked all authorizations',
  stop_payment_order: 'Customer stopped the payment',
  fraudulent: 'Suspected fraud',
  lost_card: 'Card reported lost',
  stolen_card: 'Card reported stolen',
  pickup_card: 'Card must be retained',
  merchant_blacklist: 'Blocked by the merchant',
  security_violation: 'Security violation',
  highest_risk_level: 'Blocked as highest risk',
};

/** A role as a person reads it, wherever a role is shown or picked (never the stored lower-case value). */
export const ROLE_NAMES: Readonly<Record<UserRole, string>> = { owner: 'Owner', admin: 'Admin', member: 'Member' };

/** How a campaign was recovered (the Overview's chart, a campaign's page). */
export const RECOVERED_VIA_LABELS: Readonly<Record<RecoveredVia, string>> = {
  retry: 'Retry',
  customer_update: 'Card update',
  spontaneous: 'Spontaneous',
  manual: 'Manual',
};

/**
 * What the security log records (core's SECURITY_ACTIONS), as the person who reads the log would
 * say what happened. The log showed the codes alone (`account.reset_link_created`).
 */
export const SECURITY_ACTION_LABELS: Readonly<Record<SecurityAction, string>> = {
  'token.created': 'API token created',
  'token.revoked': 'API token revoked',
  'token.limit_changed': 'API token limit changed',
  'webhook.created': 'Endpoint added',
  'webhook.updated': 'Endpoint edited',
  'webhook.deleted': 'Endpoint deleted',
  'webhook.enabled': 'Endpoint turned on',
  'webhook.disabled': 'Endpoint turned off',
  'webhook.secret_rolled': 'Signing secret rolled',
  'webhook.secret_overlap_ended': 'Previous signing secret retired early',
  'webhook.deliveries_requeued': 'Failed deliveries sent again',
  'team.invited': 'Person invited',
  'team.invitation_revoked': 'Invitation canceled',
  'team.invitation_link_renewed': 'New invitation link made',
  'team.joined': 'Joined the team',
  'team.role_changed': 'Role changed',
  'team.removed': 'Person removed',
  'account.password_changed': 'Password changed',
  'account.reset_link_created': 'Password reset link made',
  'account.reset_link_revoked': 'Password reset link withdrawn',
  'account.password_reset': 'Password set with a reset link',
  'account.signed_out_everywhere': 'Signed out everywhere',
  'account.session_revoked': 'Another session signed out',
  'workspace.updated': 'Workspace settings changed',
  'processor.connected': 'Payment processor connected',
  'processor.disconnected': 'Payment processor disconnected',
  'processor.key_rejected': "Processor's API key refused by Stripe",
  'processor.key_removed': "Processor's API key removed",
  'processor.mode_switched': 'Payment processor switched between test and live mode',
  'processor.events_retried': 'Parked processor events retried',
  'campaign.marked_recovered': 'Campaign marked recovered',
  'campaign.marked_lost': 'Campaign marked lost',
};

/**
 * The security log's actions by what they change, in the order of core's SECURITY_ACTIONS, for
 * the log's Action filter: each group is a heading of the select, with "Any …" (all of its
 * actions) first when it has more than one. Every action is in one group (labels.test).
 */
export const SECURITY_ACTION_GROUPS: ReadonlyArray<{
  group: string;
  any: string | null;
  actions: readonly SecurityAction[];
}> = [
  actionGroup('token', 'API tokens', 'Any API token change'),
  actionGroup('webhook', 'Endpoints', 'Any endpoint change'),
  actionGroup('team', 'Team', 'Any team change'),
  actionGroup('account', 'Accounts', 'Any account change'),
  actionGroup('workspace', 'Workspace', null),
  actionGroup('processor', 'Payment processor', 'Any payment processor change'),
  actionGroup('campaign', 'Campaigns', 'Any campaign marked by hand'),
];

/** A group of the Action filter: core's actions on one subject (`<subject>.<verb>`), in its order. */
function actionGroup(subject: string, group: string, any: string | null) {
  return { group, any, actions: SECURITY_ACTIONS.filter((action) => action.startsWith(`${subject}.`)) };
}

/**
 * Who made a security log change when it was no one on the team (the API's `actor` kinds), for
 * the log's Who filter: the operator CLI (in someone's name with `--actor` or not), the payment
 * processor, the service itself (`npm start`, a migration).
 */
export const SECURITY_ACTOR_KIND_LABELS: ReadonlyArray<{ value: string; label: string }> = [
  { value: 'operator', label: 'Operator CLI' },
  { value: 'processor', label: 'Stripe (the payment processor)' },
  { value: 'system', label: 'The service itself (demo setup, migrations)' },
];

/**
 * The statuses and outcomes a page shows (in a badge, a list cell, a filter's options), in
 * sentence case as every label here. The lists, badges and filters showed these codes humanized
 * in lower case ("in flight", "saved discount", "past due"); the address, the API and the CSV
 * exports keep the codes (docs/dashboard-ui.md, "Labels").
 */
export const CAMPAIGN_STATUS_LABELS: Readonly<Record<CampaignStatus, string>> = {
  in_flight: 'In flight',
  recovered: 'Recovered',
  lost: 'Lost',
  abandoned: 'Abandoned',
};

/** How a cancel session ended: saved (and with what offer), canceled, or left unanswered. */
export const CANCEL_OUTCOME_LABELS: Readonly<Record<CancelOutcome, string>> = {
  saved_discount: 'Saved with a discount',
  saved_pause: 'Saved with a pause',
  saved_downgrade: 'Saved with a downgrade',
  saved_other: 'Saved another way',
  canceled: 'Canceled',
  abandoned: 'Abandoned',
};

/** Stripe's cancellation feedback, as the person who reads the list would say it. */
export const CANCEL_REASON_LABELS: Readonly<Record<CancelReasonCode, string>> = {
  too_expensive: 'Too expensive',
  missing_features: 'Missing features',
  switched_service: 'Switched to another service',
  unused: 'Not used enough',
  customer_service: 'Poor customer service',
  too_complex: 'Too complex',
  low_quality: 'Low quality',
  other: 'Other',
};

/** The decline categories of core's decline-categories table (decisions.md). */
export const DECLINE_CATEGORY_LABELS: Readonly<Record<DeclineCategory, string>> = {
  soft: 'Soft decline',
  card_update_required: 'Card update required',
  authentication_required: 'Authentication required',
  revoked: 'Authorization revoked',
  fraud: 'Fraud risk',
  unknown: 'Unknown',
};

/** A subscription's status, in Stripe's dashboard's words. */
export const SUBSCRIPTION_STATUS_LABELS: Readonly<Record<SubscriptionStatus, string>> = {
  trialing: 'Trialing',
  active: 'Active',
  past_due: 'Past due',
  paused: 'Paused',
  canceled: 'Canceled',
};

/** A delivery (one event to one endpoint), in a campaign's or cancel session's timeline. */
export const DELIVERY_STATUS_LABELS: Readonly<Record<DeliveryStatus, string>> = {
  pending: 'Pending',
  succeeded: 'Succeeded',
  failed: 'Failed',
  skipped: 'Skipped',
};

/** An attempt of the delivery log (and Send test's, Resend's result). */
export const ATTEMPT_OUTCOME_LABELS: Readonly<Record<AttemptOutcome, string>> = {
  succeeded: 'Succeeded',
  failed: 'Failed',
  skipped: 'Skipped',
  interrupted: 'Interrupted',
};

/**
 * The Stripe import's status (GET /processor's `backfill.status`, processor_connections'
 * `backfill_status`), and, while it runs or where a failed run stopped, its phase in words.
 */
type BackfillStatus = 'idle' | 'queued' | 'running' | 'succeeded' | 'failed';

const BACKFILL_STATUS_LABELS: Readonly<Record<BackfillStatus, string>> = {
  idle: 'Not started',
  queued: 'Waiting to start',
  running: 'Running',
  succeeded: 'Finished',
  failed: 'Failed',
};

/** What a phase imports, as the Import line's counts name it ("open invoices"). */
const BACKFILL_PHASE_LABELS: Readonly<Record<string, string>> = {
  customers: 'customers',
  subscriptions: 'subscriptions',
  invoices: 'open invoices',
};

export function backfillPhaseLabel(phase: string): string {
  return BACKFILL_PHASE_LABELS[phase] ?? humanize(phase);
}

/**
 * The import's status with its phase: "Importing customers" while it runs, "Failed while
 * importing invoices" where a run stopped, "Finished", "Waiting to start". It read
 * `running (customers)`, `succeeded`.
 */
export function backfillStatusText(status: string, phase: string | null): string {
  if (phase && status === 'running') return `Importing ${backfillPhaseLabel(phase)}`;
  const label = labelOf(BACKFILL_STATUS_LABELS, status);
  return phase && status === 'failed' ? `${label} while importing ${backfillPhaseLabel(phase)}` : label;
}

/** What a security log entry changed (its target's `type`), named as the Settings pages name it. */
const SECURITY_TARGET_LABELS: Readonly<Record<string, string>> = {
  api_token: 'API token',
  webhook_endpoint: 'Endpoint',
  invitation: 'Invitation',
  user: 'Person',
  workspace: 'Workspace',
  processor_connection: 'Payment processor',
  campaign: 'Campaign',
};

/**
 * A security log action or target type in words; one these tables do not know (a later server's)
 * stays its code, never blank: a code read as words could say something it does not mean.
 */
export function securityActionLabel(action: string): string {
  return (SECURITY_ACTION_LABELS as Readonly<Record<string, string>>)[action] ?? action;
}

export function securityTargetLabel(type: string): string {
  return SECURITY_TARGET_LABELS[type] ?? type;
}

/** A payment processor by its name, from the `provider` code its connection is recorded with. */
const PROCESSOR_NAMES: Readonly<Record<string, string>> = { stripe: 'Stripe' };

/**
 * What a security log entry changed, as the Settings pages name it: "Endpoint: https://…", and
 * a processor connection by its provider's name ("Payment processor: Stripe", not `stripe`).
 */
export function securityTargetText(target: { type: string; label: string }): string {
  const label = target.type === 'processor_connection' ? (PROCESSOR_NAMES[target.label] ?? target.label) : target.label;
  return `${securityTargetLabel(target.type)}: ${label}`;
}

/**
 * Where a change came from: a loopback address means nothing to most people as `::1`, so it is
 * named, the address kept beside it; any other address is shown as it is. `shown` is short, for
 * the Security log's narrow From column ("This machine (::1)"); `whole` is what it means, for
 * the hover and for screen readers ("This machine or a proxy on it (::1)"): the words do not say
 * the request began on the server, since behind a reverse proxy on the same machine, with
 * TRUST_PROXY left at false, every request is recorded with the proxy's loopback address.
 */
export function clientAddressLabel(ip: string): { shown: string; whole: string } {
  const loopback = ip === '::1' || /^(::ffff:)?127\./i.test(ip);
  return loopback
    ? { shown: `This machine (${ip})`, whole: `This machine or a proxy on it (${ip})` }
    : { shown: ip, whole: ip };
}

/**
 * A code as words with a capital: `display_currency` -> "Display currency". Sentence case, as every
 * label here: the Overview's charts name decline categories, cancel outcomes and reasons with it
 * ("Card update required", "Saved discount", "Switched service") beside "Retry" and "Card update".
 */
export function capitalizedWords(code: string): string {
  const words = humanize(code);
  return words.charAt(0).toUpperCase() + words.slice(1);
}

/**
 * A campaign's action taken by hand, as its timeline says it before "by <who>", in sentence case as
 * every other entry: `campaign.marked_lost` -> "Marked lost" (it read "marked lost").
 */
export function campaignActionLabel(action: string): string {
  return capitalizedWords(action.replace(/^campaign\./, ''));
}

/** A label, or the code humanized with a capital (dots as spaces too) when the table does not know it. */
function labelOf(labels: Readonly<Record<string, string>>, code: string): string {
  return (Object.hasOwn(labels, code) && labels[code]) || capitalizedWords(code.replaceAll('.', ' '));
}

export function eventTypeLabel(type: string): string {
  return labelOf(EVENT_TYPE_LABELS, type);
}

export function declineCodeLabel(code: string): string {
  return labelOf(DECLINE_CODE_LABELS, code);
}

/*
 * Each status's label; one a table does not know (a later server's) is its code humanized with a
 * capital, never blank.
 */
export const campaignStatusLabel = (status: string) => labelOf(CAMPAIGN_STATUS_LABELS, status);
export const cancelOutcomeLabel = (outcome: string) => labelOf(CANCEL_OUTCOME_LABELS, outcome);
export const cancelReasonLabel = (reason: string) => labelOf(CANCEL_REASON_LABELS, reason);
export const declineCategoryLabel = (category: string) => labelOf(DECLINE_CATEGORY_LABELS, category);
export const subscriptionStatusLabel = (status: string) => labelOf(SUBSCRIPTION_STATUS_LABELS, status);
export const deliveryStatusLabel = (status: string) => labelOf(DELIVERY_STATUS_LABELS, status);
export const attemptOutcomeLabel = (outcome: string) => labelOf(ATTEMPT_OUTCOME_LABELS, outcome);
