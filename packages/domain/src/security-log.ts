import { toIsoMillis, type SecurityAction, type SecurityActorType } from '@retention/core';
import { opaqueKeysetPage, type Queryable } from '@retention/db';
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
  actor: { type: SecurityActorType; user_id: string | null; label: string | null };
  target: { type: string; id: string | null; label: string | null } | null;
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
    target_type: input.target?.type ?? null,
    target_id: clip(input.target?.id, 200),
    target_label: clip(input.target?.label, 2048),
    ip_address: input.actor.ip ?? null,
    user_agent: clip(input.actor.user_agent, 512),
    details: input.details ?? {},
    ...(input.at !== undefined && { created_at: input.at }),
  });
}

function toSecurityEvent(row: SecurityEventRow): SecurityEvent {
  return {
    id: row.id,
    object: 'security_event',
    action: row.action,
    actor: { type: row.actor_type, user_id: row.actor_user_id, label: row.actor_label },
    target: row.target_type ? { type: row.target_type, id: row.target_id, label: row.target_label } : null,
    ip_address: row.ip_address,
    user_agent: row.user_agent,
    details: row.details,
    created_at: toIsoMillis(row.created_at),
  };
}

export const SECURITY_LOG_PAGE_SIZE = 50;

/** A workspace's security log, newest first, in pages of opaque cursors. */
export async function listSecurityEvents(
  db: Queryable,
  workspaceId: string,
  options: { cursor?: string; limit?: number } = {},
): Promise<{ data: SecurityEvent[]; has_more: boolean; next_cursor: string | null }> {
  assertUuid(workspaceId, 'workspace_id');
  const page = await opaqueKeysetPage<SecurityEventRow & Record<string, unknown>>(
    db('security_events').where({ workspace_id: workspaceId }),
    { column: 'created_at', cursor: options.cursor, limit: options.limit ?? SECURITY_LOG_PAGE_SIZE },
  );
  return { data: page.rows.map(toSecurityEvent), has_more: page.hasMore, next_cursor: page.nextCursor };
}
