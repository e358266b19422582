import { notFound } from '@retention/core';
import type { Queryable } from '@retention/db';
import { getWorkspace } from '../workspaces.js';
import { assertUuid } from '../validate.js';
import { toAccountUser, type AccountUser, type AccountUserRow } from './account-user.js';

/**
 * How the operator CLI finds people: `user list` shows who is in a workspace, and
 * `user reset-link` takes a person by id or by the address the operator was told. The
 * invitation id `user invite` prints is not a user's until it is accepted, so a reset link
 * asked for with it says so rather than only "no user".
 */

/** A workspace's people, oldest first, each with whether they can sign in (never a password). */
export async function listWorkspaceUsers(
  db: Queryable,
  workspaceId: string,
): Promise<Array<AccountUser & { has_password: boolean }>> {
  assertUuid(workspaceId, 'workspace');
  await getWorkspace(db, workspaceId);
  const rows = await db<AccountUserRow>('users')
    .where({ workspace_id: workspaceId })
    .orderBy([{ column: 'created_at' }, { column: 'id' }]);
  return rows.map((row) => ({ ...toAccountUser(row), has_password: row.password_hash !== null }));
}

type UserKey = { id: string } | { workspace_id: string; email: string };

/** The user a reset link is for; not found, saying why and what to run instead, otherwise. */
export async function findUserForResetLink(
  db: Queryable,
  key: UserKey,
): Promise<{ id: string; workspace_id: string; email: string }> {
  const query = db<AccountUserRow>('users');
  if ('id' in key) {
    assertUuid(key.id, 'id');
    query.where({ id: key.id });
  } else {
    assertUuid(key.workspace_id, 'workspace');
    await getWorkspace(db, key.workspace_id);
    query.where({ workspace_id: key.workspace_id }).whereRaw('lower(email) = lower(?)', [key.email]);
  }
  const user = await query.first('id', 'workspace_id', 'email');
  if (user) return user;
  const invitation = await pendingInvitation(db, key);
  if (invitation) {
    throw notFound(
      `${invitation.email} has an invitation (${invitation.id}) that is not accepted yet, so no account to reset: ` +
        'run user invite again for a new invitation link.',
    );
  }
  throw notFound(
    'id' in key
      ? `No user with id ${key.id}. user list --workspace W shows each person's id.`
      : `No user with email ${key.email} in workspace ${key.workspace_id}. user list --workspace W shows who is there.`,
  );
}

/** An open invitation the key names: by its own id (what user invite prints), or by its address. */
async function pendingInvitation(db: Queryable, key: UserKey): Promise<{ id: string; email: string } | undefined> {
  const query = db('account_links').where({ kind: 'invitation' }).whereNull('used_at').whereNull('revoked_at');
  if ('id' in key) query.where({ id: key.id });
  else query.where({ workspace_id: key.workspace_id }).whereRaw('lower(email) = lower(?)', [key.email]);
  return query.where('expires_at', '>', db.fn.now()).orderBy('created_at', 'desc').first('id', 'email');
}
