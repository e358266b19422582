import { notFound, toIsoMillis, toIsoMillisOrNull, type UserRole } from '@retention/core';
import type { Queryable } from '@retention/db';
import type { Actor } from '../security-log.js';
import { assertUuid } from '../validate.js';

/** A person of a workspace as the dashboard shows them (docs/dashboard-api.md, `user`). */
export interface AccountUser {
  id: string;
  object: 'user';
  email: string;
  name: string | null;
  role: UserRole;
  last_sign_in_at: string | null;
  created_at: string;
}

export interface AccountUserRow {
  id: string;
  workspace_id: string;
  email: string;
  name: string | null;
  role: UserRole;
  /** The highest role held here before `role`, when it ever changed (migration 0034; kept by 0035's trigger). */
  highest_former_role: UserRole | null;
  password_hash: string | null;
  last_sign_in_at: Date | null;
  created_at: Date;
}

export function toAccountUser(row: AccountUserRow): AccountUser {
  return {
    id: row.id,
    object: 'user',
    email: row.email,
    name: row.name,
    role: row.role,
    last_sign_in_at: toIsoMillisOrNull(row.last_sign_in_at),
    created_at: toIsoMillis(row.created_at),
  };
}

/** A user of this workspace; another workspace's user is not found, like an unknown id. */
export async function findWorkspaceUser(
  db: Queryable,
  workspaceId: string,
  userId: string,
  lock = false,
): Promise<AccountUserRow> {
  assertUuid(userId);
  const query = db<AccountUserRow>('users').where({ id: userId, workspace_id: workspaceId }).first();
  const row = await (lock ? query.forUpdate() : query);
  // Said in words: the page that asks loaded the person earlier (removed since, in another tab).
  if (!row) throw notFound('This person is no longer in the workspace.');
  return row;
}

/** The security log's actor for a signed-in user, with where the request came from. */
export function userActor(
  user: { id: string; email: string },
  request: { ip?: string | null; user_agent?: string | null } = {},
): Actor {
  return {
    type: 'user',
    user_id: user.id,
    label: user.email,
    ip: request.ip ?? null,
    user_agent: request.user_agent ?? null,
  };
}

/**
 * The CLI's actor: `operator`, naming a user when --actor gave one (who must belong to the
 * workspace the change is in).
 */
export async function operatorActor(db: Queryable, workspaceId: string, userId?: string): Promise<Actor> {
  if (!userId) return { type: 'operator', label: 'operator CLI' };
  const user = await findWorkspaceUser(db, workspaceId, userId);
  return { type: 'operator', user_id: user.id, label: `operator CLI as ${user.email}` };
}
