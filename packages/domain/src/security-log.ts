import {
  invalidField,
  isOneOf,
  isUuid,
  SECURITY_ACTIONS,
  SECURITY_ACTOR_TYPES,
  toIsoMillis,
  type SecurityAction,
  type SecurityActorType,
} from '@retention/core';
import {
  DEFAULT_PAGE_LIMIT,
  instantParam,
  listScope,
  newestFirst,
  opaqueKeysetPage,
  type Queryable,
} from '@retention/db';
import { assertUuid } from './validate.js';

/**
 * The security log (docs/dashboard-api.md): every change to a token, an endpoint or its
 * secret, the team, the workspace or the processor connection, whether made in the dashboard
 * or with the operator CLI. `recordSecurityEvent` takes the transaction of the change, so the
 * change and its record commit together or not at all.
 */

/**
 * Who acts, and from where. The edges build it: the dashboard from the session and the
 * request (`ip`, `user_agent`), the CLI as an `operator` (with `user_id` when `--actor` names
 * one), the processor adapter as `processor`.
 */
export interface Actor {
  type: SecurityActorType;
  /** The signed-in user, or the user an operator named with --actor. */
  user_id?: string | null;
  /**
   * What to show for the actor (an email address, "operator CLI"); kept after the user is removed.
   */
  label?: string | null;
  ip?: string | null;
  user_agent?: string | null;
}

export const OPERATOR: Actor = { type: 'operator', label: 'operator CLI' };

export interface SecurityEventInput {
  workspace_id: string;
  action: SecurityAction;
  actor: Actor;
  target?: { type: string; id?: string | null; label?: string | null };
  /** What changed, for the reader: never a secret, a token value or a password. */
  details?: Record<string, unknown>;
  /** When it happened, for a replay of history (the demo seed); the database's now when omitted. */
  at?: Date;
}

export interface SecurityEvent {
  id: string;
  object: 'security_event';
  action: SecurityAction;
  /**
   * `email`: the address of the person `user_id` names, as it was when the entry was written, kept
   * after they are removed from the team (and `user_id` is null); null for no person.
   */
  actor: { type: SecurityActorType; user_id: string | null; label: string | null; email: string | null };
  /**
   * `exists`: whether what the entry changed is still there to open (listSecurityEvents): the
   * token, the endpoint, the person, the pending invitation, the campaign, the connection, the
   * workspace; false once it was deleted (an endpoint, someone removed), used or canceled (an
   * invitation), or for a type the log cannot look up.
   */
  target: { type: string; id: string | null; label: string | null; exists: boolean } | null;
  ip_address: string | null;
  user_agent: string | null;
  details: Record<string, unknown>;
  created_at: string;
}

interface SecurityEventRow {
  id: string;
  action: SecurityAction;
  actor_type: SecurityActorType;
  actor_user_id: string | null;
  actor_label: string | null;
  actor_email: string | null;
  target_type: string | null;
  target_id: string | null;
  target_label: string | null;
  ip_address: string | null;
  user_agent: string | null;
  details: Record<string, unknown>;
  created_at: Date;
}

const clip = (value: string | null | undefined, max: number) => (value == null ? null : value.slice(0, max));

/** Writes one record inside the caller's transaction. */
export async function recordSecurityEvent(trx: Queryable, input: SecurityEventInput): Promise<void> {
  await trx('security_events').insert({
    workspace_id: input.workspace_id,
    action: input.action,
    actor_type: input.actor.type,
    actor_user_id: input.actor.user_id ?? null,
    actor_label: clip(input.actor.label, 320),
    // The person's address as it is now, in the same statement (migration 0040): kept when they leave.
    actor_email:
      input.actor.user_id == null ? null : trx.raw('(SELECT email FROM users WHERE id = ?)', [input.actor.user_id]),
    target_type: input.target?.type ?? null,
    target_id: clip(input.target?.id, 200),
    target_label: clip(input.target?.label, 2048),
    ip_address: input.actor.ip ?? null,
    user_agent: clip(input.actor.user_agent, 512),
    details: input.details ?? {},
    ...(input.at !== undefined && { created_at: input.at }),
  });
}

function toSecurityEvent(row: SecurityEventRow, existing: ReadonlySet<string>): SecurityEvent {
  return {
    id: row.id,
    object: 'security_event',
    action: row.action,
    actor: { type: row.actor_type, user_id: row.actor_user_id, label: row.actor_label, email: row.actor_email },
    target: row.target_type
      ? {
          type: row.target_type,
          id: row.target_id,
          label: row.target_label,
          exists: row.target_id !== null && existing.has(targetKey(row.target_type, row.target_id)),
        }
      : null,
    ip_address: row.ip_address,
    user_agent: row.user_agent,
    details: row.details,
    created_at: toIsoMillis(row.created_at),
  };
}

/** The query parameters of the log's filters (docs/dashboard-api.md, "Security log"), besides `limit` and `cursor`. */
export const SECURITY_LOG_FILTER_PARAMS = ['action', 'actor', 'from', 'to'] as const;

/**
 * What `actor` takes besides a person's id: the actors that are no one on the team, by the kind
 * they are recorded as (`actor_type`): the operator CLI (with or without `--actor`), the payment
 * processor, and the service itself (`npm start`, a migration).
 */
type SecurityLogActorKind = Exclude<SecurityActorType, 'user'>;
export const SECURITY_LOG_ACTOR_KINDS: readonly SecurityLogActorKind[] = SECURITY_ACTOR_TYPES.filter(
  (type): type is SecurityLogActorKind => type !== 'user',
);

export interface SecurityLogFilters {
  /** Any of these actions: each once, in SECURITY_ACTIONS order. */
  actions?: SecurityAction[];
  /**
   * Made by this person (`user_id`: in the dashboard, or with the operator CLI's `--actor`
   * naming them), or by an actor of this kind.
   */
  actor?: { user_id: string } | { kind: SecurityLogActorKind };
  /** created_at >= from */
  from?: Date;
  /** created_at < to */
  to?: Date;
}

const ACTOR_RULE = `must be the id of a person on this workspace's team, or one of ${SECURITY_LOG_ACTOR_KINDS.join(', ')}`;

/** A value as a message quotes it: at most 60 characters, in JSON's quotes. */
const quoted = (value: string) => {
  // By code point, so an emoji is never cut in half into a lone surrogate.
  const characters = [...value];
  return JSON.stringify(characters.length > 60 ? `${characters.slice(0, 60).join('')}…` : value);
};

/**
 * Reads the log's filters from the query strings (each given at most once: queryStrings). `action`
 * is a comma-separated list, as a query parameter is never repeated in the dashboard API. Whether
 * an `actor` id is a person of the workspace is the list's to check (listSecurityEvents): it needs
 * the database.
 */
export function securityLogFilters(
  query: Partial<Record<(typeof SECURITY_LOG_FILTER_PARAMS)[number], string>>,
): SecurityLogFilters {
  const filters: SecurityLogFilters = {};
  if (query.action !== undefined) {
    const names = query.action.split(',');
    if (names.some((name) => name === '')) {
      throw invalidField('action', 'must be one or more actions separated by commas, none of them empty');
    }
    const unknown = names.find((name) => !isOneOf(SECURITY_ACTIONS, name));
    if (unknown !== undefined) {
      throw invalidField(
        'action',
        `${quoted(unknown)} is not an action of the security log; give one or more of ${SECURITY_ACTIONS.join(', ')}, separated by commas`,
      );
    }
    filters.actions = SECURITY_ACTIONS.filter((action) => names.includes(action));
  }
  if (query.actor !== undefined) {
    const kind = query.actor.toLowerCase();
    // A kind in any case, as an id is taken in any case.
    if (isOneOf(SECURITY_LOG_ACTOR_KINDS, kind)) filters.actor = { kind };
    else if (isUuid(query.actor)) filters.actor = { user_id: query.actor.toLowerCase() };
    else throw invalidField('actor', ACTOR_RULE);
  }
  if (query.from !== undefined) filters.from = instantParam('from', query.from);
  if (query.to !== undefined) filters.to = instantParam('to', query.to);
  return filters;
}

/**
 * The scope of the log's cursors (listScope): none without filters, so a cursor of the unfiltered
 * log made before the filters existed still works; with filters, their digest, so a cursor is
 * refused by any other filters (a cursor of one filter set would start another at an arbitrary row).
 */
function securityLogScope(filters: SecurityLogFilters): string | undefined {
  const { actions, actor, from, to } = filters;
  if (!actions && !actor && !from && !to) return undefined;
  return listScope('security-log', {
    action: actions?.join(','),
    actor: actor && ('user_id' in actor ? actor.user_id : actor.kind),
    from,
    to,
  });
}

/**
 * A workspace's security log, newest first, in pages of opaque cursors, filtered. Each filter is
 * served by an index (migration 0038, docs/performance.md, "Security log filters"): an action by
 * security_events_action_idx, a person by security_events_actor_user_idx, a kind of actor by
 * security_events_actor_kind_idx, a time range by the range of the list index
 * (security_events_workspace_idx) or of the filter's. One action is an equality, so its index is
 * read in the list's order; several are read from it and sorted, or the list index is walked,
 * as the planner judges from their number.
 */
export async function listSecurityEvents(
  db: Queryable,
  workspaceId: string,
  options: { filters?: SecurityLogFilters; cursor?: string | undefined; limit?: number } = {},
): Promise<{ data: SecurityEvent[]; has_more: boolean; next_cursor: string | null }> {
  assertUuid(workspaceId, 'workspace_id');
  const filters = options.filters ?? {};
  const query = db('security_events').where({ workspace_id: workspaceId });
  const { actions, actor, from, to } = filters;
  if (actions?.length === 1) query.where('action', actions[0]!);
  else if (actions) query.whereIn('action', actions);
  if (actor && 'user_id' in actor) {
    // Another workspace's person (or no one) is refused, not an empty list: the id is wrong.
    const person = await db('users')
      .where({ id: actor.user_id, workspace_id: workspaceId })
      .first<{ id: string } | undefined>('id');
    if (!person) throw invalidField('actor', ACTOR_RULE);
    query.where('actor_user_id', actor.user_id);
  } else if (actor) query.where('actor_type', actor.kind);
  if (from) query.where('created_at', '>=', from);
  if (to) query.where('created_at', '<', to);
  const page = await opaqueKeysetPage<SecurityEventRow & Record<string, unknown>>(query, {
    order: newestFirst('created_at'),
    cursor: options.cursor,
    limit: options.limit ?? DEFAULT_PAGE_LIMIT,
    scope: securityLogScope(filters),
  });
  const existing = await existingTargets(db, workspaceId, page.rows);
  return {
    data: page.rows.map((row) => toSecurityEvent(row, existing)),
    has_more: page.hasMore,
    next_cursor: page.nextCursor,
  };
}

const targetKey = (type: string, id: string) => `${type}:${id}`;

/**
 * Where each kind of target lives, and which of its rows are still there to open: an invitation
 * only while pending (neither accepted nor canceled), as the Team page lists it.
 */
const TARGET_TABLES: Readonly<Record<string, { table: string; pendingOnly?: boolean }>> = {
  api_token: { table: 'api_tokens' },
  webhook_endpoint: { table: 'webhook_endpoints' },
  user: { table: 'users' },
  invitation: { table: 'account_links', pendingOnly: true },
  campaign: { table: 'recovery_campaigns' },
  processor_connection: { table: 'processor_connections' },
};

/**
 * The targets of `rows` that still exist in the workspace, as `targetKey`s: one query a kind of
 * target on the page (at most 100 ids, by primary key), none for a page without targets.
 */
async function existingTargets(
  db: Queryable,
  workspaceId: string,
  rows: readonly SecurityEventRow[],
): Promise<Set<string>> {
  const existing = new Set<string>();
  const idsByType = new Map<string, Set<string>>();
  for (const row of rows) {
    if (!row.target_type || row.target_id === null) continue;
    if (row.target_type === 'workspace') {
      if (row.target_id === workspaceId) existing.add(targetKey('workspace', row.target_id));
      continue;
    }
    // Ids are uuids in every table looked up; anything else (an id of a later kind) is no row.
    if (!TARGET_TABLES[row.target_type] || !isUuid(row.target_id)) continue;
    const ids = idsByType.get(row.target_type) ?? new Set<string>();
    ids.add(row.target_id.toLowerCase());
    idsByType.set(row.target_type, ids);
  }
  for (const [type, ids] of idsByType) {
    const { table, pendingOnly } = TARGET_TABLES[type]!;
    const query = db(table)
      .where({ workspace_id: workspaceId })
      .whereIn('id', [...ids]);
    if (pendingOnly) query.whereNull('used_at').whereNull('revoked_at');
    for (const { id } of await query.select<{ id: string }[]>('id')) existing.add(targetKey(type, id));
  }
  return existing;
}
