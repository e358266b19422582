import type { ProcessorStatus, SecurityAction } from '@retention/core/enums';
import { formatListTime, formatNumber } from './format.js';
import { capitalizedWords, clientAddressLabel, eventTypeLabel, RECOVERED_VIA_LABELS, ROLE_NAMES } from './labels.js';
import { STRIPE_STATUS_TEXT } from './pages/settings/processor-story.js';

/**
 * What a security log entry changed, from its `details` (the record each domain function writes
 * with the change: docs/dashboard-api.md, "Security log"), in the words a customer reads: a role
 * change is "Member → Admin", a workspace change "Display currency: USD → EUR". The log named
 * the action and its target alone ("Role changed · Person: …"), never what the change was.
 *
 * The result is plain strings, shown as React text (never markup: names and URLs are what
 * people typed). A detail the tables below do not know (a later server's, a shape this page has
 * not met) is still shown, as "Key: value", never dropped and never a crash; a detail whose name
 * says it holds a secret is never shown (none is recorded: tokens and secrets appear by their
 * last four characters only).
 */
export function securityDetailsText(
  action: string,
  details: unknown,
  target?: { label: string | null } | null,
): string[] {
  if (!isRecord(details)) return [];
  const known: Partial<Record<string, Describe>> = ACTION_DETAILS[action as SecurityAction] ?? {};
  const phrases: string[] = [];
  for (const [key, value] of Object.entries(details)) {
    const describe = known[key];
    const phrase = describe ? describe(value, details, target?.label ?? null) : otherDetail(key, value);
    if (phrase) phrases.push(phrase);
  }
  return phrases;
}

/**
 * One detail in words, given the whole record (a role change reads its `to` with its `from`) and
 * the entry's target label (what the page shows above the details); null hides it.
 */
type Describe = (value: unknown, details: Record<string, unknown>, targetLabel?: string | null) => string | null;

/** Said by the action or the target already (`step`, the processor's `provider`), or an internal id. */
const hidden: Describe = () => null;

const ROLE: Readonly<Record<string, string>> = ROLE_NAMES;
const roleName = (value: unknown) => (typeof value === 'string' ? (ROLE[value] ?? value) : plain(value));

/**
 * A Stripe connection's status (`processor.connected`'s `status` and `previous_status`), in the
 * Processor page's words: one table (processor-story.ts), so the log and the page cannot drift.
 */
const connectionStatus = (value: unknown) =>
  typeof value === 'string'
    ? ((STRIPE_STATUS_TEXT as Readonly<Record<string, string>>)[value] ?? capitalizedWords(value))
    : plain(value);

/**
 * The workspace's processor flag (`workspace.updated`'s `processor`, set by the CLI): whether
 * outbound webhooks are sent, which a Stripe connection sets but is not the only way to
 * (processor-story.ts). Its `connected` is not the connection's "Connected and syncing": the
 * flag is set with no Stripe behind it (the CLI, the demo), so it has words of its own.
 */
const PROCESSOR_FLAG: Readonly<Record<ProcessorStatus, string>> = {
  connected: 'Connected',
  disconnected: 'Disconnected',
};
const processorFlag = (value: unknown) =>
  typeof value === 'string'
    ? ((PROCESSOR_FLAG as Readonly<Record<string, string>>)[value] ?? capitalizedWords(value))
    : plain(value);

/** How a campaign was recovered, as its page and the Overview name it (labels.ts). */
const recoveredVia = (value: unknown) =>
  typeof value === 'string'
    ? ((RECOVERED_VIA_LABELS as Readonly<Record<string, string>>)[value] ?? capitalizedWords(value))
    : plain(value);

/** Why an invitation or a reset link was withdrawn with no one asking (team.ts, password-reset.ts). */
const REASONS: Readonly<Record<string, string>> = {
  inviter_role_changed: "The inviter's role changed",
  inviter_removed: 'The inviter was removed',
  creator_role_changed: "Its maker's role changed",
  creator_removed: 'Its maker was removed',
  former_role_rule: 'Its maker did not outrank every role the account has held',
};
const reason: Describe = (value) =>
  typeof value === 'string' ? (REASONS[value] ?? `Reason: ${capitalizedWords(value)}`) : otherDetail('reason', value);

/** `{ from, to }`: "A → B", each side named by `name`. */
function change(label: string | null, name: (value: unknown) => string = plain): Describe {
  return (value) => {
    if (!isRecord(value) || !('from' in value || 'to' in value)) return otherDetail(label ?? 'change', value);
    const words = `${name(value.from)} → ${name(value.to)}`;
    return label ? `${label}: ${words}` : words;
  };
}

/** `{ from, to }` as "Label: A → B"; any other value (a record from before from/to) as "Old label: value". */
function changeOrNew(label: string, oldLabel: string, name: (value: unknown) => string = plain): Describe {
  return (value, details) =>
    isRecord(value) && ('from' in value || 'to' in value)
      ? change(label, name)(value, details)
      : labelled(oldLabel, name)(value, details);
}

/** The `from` of a record that is itself `{ from, to }` (a role change, a token's limit); its `to` is hidden. */
const fromTo =
  (label: string | null, name: (value: unknown) => string = plain): Describe =>
  (_value, details) =>
    change(label, name)(details, details);

const labelled =
  (label: string, name: (value: unknown) => string = plain): Describe =>
  (value) =>
    `${label}: ${name(value)}`;

/**
 * An endpoint's name (`webhook.created`, `webhook.deleted`): hidden when the target already names
 * the endpoint by it ("Name (URL)", as records do since they name endpoints so), said otherwise
 * (an older record, whose target is the URL alone).
 */
const endpointName: Describe = (value, _details, targetLabel) =>
  typeof value === 'string' && targetLabel?.startsWith(`${value} (`) ? null : `Name: ${plain(value)}`;

/**
 * An endpoint's events: none listed is every event, later ones included (the endpoint form's "All
 * events"). Parted by semicolons: a label may hold a comma ("Payment failed, recovery started").
 */
const eventList = (value: unknown) =>
  Array.isArray(value)
    ? value.length === 0
      ? 'All events'
      : value.map((type) => (typeof type === 'string' ? eventTypeLabel(type) : plain(type))).join('; ')
    : plain(value);

const currency = (value: unknown) => (typeof value === 'string' ? value.toUpperCase() : plain(value));
const count = (value: unknown, one: string, many: string) =>
  typeof value === 'number' ? `${formatNumber(value)} ${value === 1 ? one : many}` : plain(value);
/**
 * Sessions a change ended: nothing when it ended none (a password changed or reset with no
 * other session open, a sign-out everywhere from the CLI), where "0 other sessions ended" read
 * as a count of nothing; the count otherwise.
 */
const endedCount =
  (one: string, many: string): Describe =>
  (value) =>
    value === 0 ? null : count(value, one, many);
const sessionsEnded = endedCount('session ended', 'sessions ended');
const time = (value: unknown) =>
  typeof value === 'string' && !Number.isNaN(Date.parse(value)) ? formatListTime(value, true) : plain(value);
const tokenEnd: Describe = (value) => `Ends in …${plain(value)}`;
const perMinute = (value: unknown) =>
  typeof value === 'number' ? `${formatNumber(value)} requests a minute` : plain(value);
const stripeKey = (last4: unknown) => `rk_…${plain(last4)}`;
/** A connection's mode as the Processor page shows it. */
const stripeMode = (value: unknown) => (value === 'live' ? 'Live mode' : value === 'test' ? 'Test mode' : plain(value));

/** How long a roll kept the previous secret: "24 hours", "30 minutes", "2 days". */
function duration(seconds: unknown): string {
  if (typeof seconds !== 'number') return plain(seconds);
  const units: [number, string][] = [
    [86_400, 'day'],
    [3_600, 'hour'],
    [60, 'minute'],
  ];
  for (const [size, unit] of units) {
    if (seconds >= size && seconds % size === 0) return count(seconds / size, unit, `${unit}s`);
  }
  return count(seconds, 'second', 'seconds');
}

/**
 * Every action's details, as each domain function records them (grep recordSecurityEvent in
 * packages/domain). An action with none (a password change, an endpoint turned on) shows none.
 */
const ACTION_DETAILS: Readonly<Record<SecurityAction, Readonly<Record<string, Describe>>>> = {
  'token.created': { hint: tokenEnd, rate_limit_per_minute: labelled('Limit', perMinute) },
  'token.revoked': { hint: tokenEnd },
  'token.limit_changed': {
    from: (value, details) => `Limit: ${plain(value)} → ${perMinute(details.to)}`,
    to: hidden,
  },
  'webhook.created': { name: endpointName, events: labelled('Events', eventList) },
  // The fields that changed, each `{ from, to }` ("URL: A → B"); the entries recorded before
  // from/to hold the new value alone, read as they were ("New URL: B"). The target is the
  // endpoint by its name and URL before the change (by its URL alone in older entries).
  'webhook.updated': {
    name: changeOrNew('Name', 'New name'),
    url: changeOrNew('URL', 'New URL'),
    events: changeOrNew('Events', 'New events', eventList),
  },
  'webhook.deleted': { name: endpointName },
  'webhook.enabled': {},
  'webhook.disabled': {},
  'webhook.secret_rolled': {
    overlap_seconds: (value) =>
      value === 0 ? 'Previous secret stopped at once' : `Previous secret accepted for ${duration(value)} more`,
    ended_overlap_until: (value) => `An earlier overlap, due to end ${time(value)}, ended early`,
  },
  'webhook.secret_overlap_ended': {
    ended_overlap_until: (value) => `Previous secret was to be accepted until ${time(value)}`,
  },
  'webhook.deliveries_requeued': {
    // A retry that found none is no longer recorded (it changed nothing); an entry from before
    // says so in words, its time with it, rather than "0 deliveries sent again", a count of nothing.
    requeued: (value, details) =>
      value === 0
        ? `No failed deliveries to send again (none failed or was skipped since ${time(details.since)})`
        : count(value, 'delivery sent again', 'deliveries sent again'),
    since: (value, details) => (details.requeued === 0 ? null : `Failed or skipped since ${time(value)}`),
  },
  'team.invited': { role: (value) => `As ${roleName(value)}` },
  'team.invitation_revoked': { reason, invited_by: labelled('Invited by') },
  // New link or Resend on the Team page: the pending invitation's role, as team.invited says it.
  'team.invitation_link_renewed': { role: (value) => `As ${roleName(value)}` },
  'team.joined': {
    role: (value) => `As ${roleName(value)}`,
    added_directly: (value) => (value === true ? 'Added by the operator, without an invitation' : null),
    invitation_id: hidden,
  },
  'team.role_changed': { from: fromTo(null, roleName), to: hidden },
  'team.removed': { role: (value) => `Was ${roleName(value)}` },
  'account.password_changed': {
    other_sessions_ended: endedCount('other session ended', 'other sessions ended'),
  },
  // `step`: records written before migration 0021 told the two apart.
  'account.reset_link_created': { step: hidden },
  'account.reset_link_revoked': { reason, created_by: labelled('Made by') },
  // `link_made_by`: the address of whoever made the link on the Team page, or "operator CLI" for
  // `user reset-link`'s (migration 0036); absent when its holder asked for it.
  'account.password_reset': { step: hidden, sessions_ended: sessionsEnded, link_made_by: labelled('Link made by') },
  'account.signed_out_everywhere': { sessions_ended: sessionsEnded },
  // One session ended from the Account page's Sessions list: the device and address it was used from.
  'account.session_revoked': {
    session_id: hidden,
    device: labelled('Device'),
    // As the From column says an address: "This machine (::1)" for a loopback one.
    ip_address: (value) => (typeof value === 'string' ? `IP address: ${clientAddressLabel(value).shown}` : null),
  },
  'workspace.updated': {
    name: change('Name'),
    display_currency: change('Display currency', currency),
    processor: change('Processor', processorFlag),
  },
  'processor.connected': {
    provider: hidden,
    status: (value) => connectionStatus(value),
    previous_status: (value) => (value === null ? null : `Before: ${connectionStatus(value)}`),
    // "old → new" when a secret was replaced (recorded since stop 33; earlier records, and a
    // first connection, have the new one only).
    webhook_secret_last4: (value, details) => {
      const before = details.previous_webhook_secret_last4;
      if (typeof before !== 'string') return `Signing secret whsec_…${plain(value)}`;
      return before === value
        ? `Signing secret whsec_…${plain(value)} (same last four)`
        : `Signing secret whsec_…${before} → whsec_…${plain(value)}`;
    },
    previous_webhook_secret_last4: hidden,
    api_key: (value, details) =>
      value === 'given'
        ? `New API key ${stripeKey(details.api_key_last4)}`
        : value === 'kept'
          ? `API key kept (${stripeKey(details.api_key_last4)})`
          : value === 'none'
            ? 'No API key'
            : otherDetail('api_key', value),
    api_key_last4: hidden,
    mode: (value) => (value === null || value === undefined ? null : stripeMode(value)),
    proof: (value) =>
      value === 'first signed event' ? 'Confirmed by its first signed event' : labelled('Proof')(value, {}),
  },
  'processor.disconnected': { provider: hidden, reason: (value) => (value === 'owner' ? null : reason(value, {})) },
  'processor.key_rejected': { provider: hidden, api_key_last4: (value) => `API key ${stripeKey(value)}` },
  'processor.key_removed': { provider: hidden, api_key_last4: (value) => `API key ${stripeKey(value)}` },
  'processor.mode_switched': {
    provider: hidden,
    from: (value, details) => `${stripeMode(value)} → ${stripeMode(details.to)}`,
    to: hidden,
    api_key_last4: (value) => `New API key ${stripeKey(value)}`,
  },
  'processor.events_retried': {
    provider: hidden,
    count: (value) => count(value, 'event retried', 'events retried'),
    event_ids: (value) =>
      Array.isArray(value) ? `Events: ${value.map((id) => plain(id)).join(', ')}` : otherDetail('event_ids', value),
  },
  'campaign.marked_recovered': {
    // The action says a manual recovery; any other way is named as the campaign's page names it.
    recovered_via: (value) => (value === 'manual' ? null : labelled('Recovered via', recoveredVia)(value, {})),
  },
  'campaign.marked_lost': {},
};

/** A name that says it may hold a secret; its last four characters or a token's hint may show. */
const SECRET_NAME = /secret|password|token|api_?key|private|credential/i;
const SHOWN_PART = /(last4|hint)$/i;

/** A detail the tables do not know: "Key: value", unless its name says it may be a secret. */
function otherDetail(key: string, value: unknown): string | null {
  if (SECRET_NAME.test(key) && !SHOWN_PART.test(key)) return null;
  return `${capitalizedWords(key)}: ${plain(value)}`;
}

const MAX_LENGTH = 200;

/** Any JSON value as short text: a `{ from, to }` as "A → B", a list joined, an object as key: value. */
function plain(value: unknown, depth = 0): string {
  const text = ((): string => {
    if (value === null || value === undefined) return '—';
    if (typeof value === 'string') return value;
    if (typeof value === 'number') return formatNumber(value, Number.isInteger(value) ? 0 : 2);
    if (typeof value === 'boolean') return value ? 'yes' : 'no';
    if (depth > 2) return '…';
    if (Array.isArray(value))
      return value.length === 0 ? 'none' : value.map((item) => plain(item, depth + 1)).join(', ');
    if (isRecord(value)) {
      if ('from' in value && 'to' in value && Object.keys(value).length === 2)
        return `${plain(value.from, depth + 1)} → ${plain(value.to, depth + 1)}`;
      return Object.entries(value)
        .filter(([key]) => !SECRET_NAME.test(key) || SHOWN_PART.test(key))
        .map(([key, item]) => `${capitalizedWords(key)}: ${plain(item, depth + 1)}`)
        .join('; ');
    }
    return '—'; // JSON holds nothing else (no functions, symbols or bigints)
  })();
  return text.length > MAX_LENGTH ? `${text.slice(0, MAX_LENGTH - 1)}…` : text;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
