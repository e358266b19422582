import { Type } from '@sinclair/typebox';
import { conflict, OneOf, USER_ROLES, type UserRole } from '@retention/core';
import { inTransaction, type Db, type Queryable, type Transaction } from '@retention/db';
import { recordSecurityEvent, type Actor } from '../security-log.js';
import { inputValidator } from '../validate.js';
import { findWorkspaceUser, toAccountUser, type AccountUser, type AccountUserRow } from './account-user.js';
import { revokeOwnResetLinks, revokeResetLinksMadeBy } from './password-reset.js';
import {
  assertMayAssign,
  assignableRoles,
  can,
  formerRoleWithholdingResetLink,
  mayMakeResetLinkFor,
  resetLinkRoles,
} from './permissions.js';
import { rememberRemovedSessions, revokeUserSessions } from './sessions.js';

/**
 * The team: change a role, remove someone. A workspace never loses its last owner; an admin
 * touches only admins and members. The workspace's owners are locked first, so two owners
 * demoting each other at once cannot both succeed.
 *
 * An invitation is only as good as its inviter's standing: when someone is removed, the open
 * invitations they sent are revoked; when their role changes, those for a role they may no
 * longer give. Otherwise an admin being shown the door could leave links behind that let
 * someone in as an admin afterwards. The same goes for the password-reset links they made
 * for others (password-reset.ts).
 */

/**
 * The workspace's people as `viewer` sees them on the Team page: each with whether the viewer may
 * make them a reset link (`emailed`: this service sends email), so the page offers Reset link
 * only where it works, and, where only a role they held before keeps it from the viewer, that
 * role, so the page can say why and who can make one.
 */
export async function listMembers(
  db: Queryable,
  workspaceId: string,
  viewer: { id: string; role: UserRole },
  emailed: boolean,
): Promise<
  Array<
    AccountUser & {
      has_password?: boolean;
      can_make_reset_link: boolean;
      reset_link_former_role: 'admin' | 'owner' | null;
    }
  >
> {
  const rows = await db<AccountUserRow>('users').where({ workspace_id: workspaceId }).orderBy('created_at').limit(1000);
  const mayInvite = can(viewer.role, 'manage_team');
  return rows.map((row) => ({
    ...toAccountUser(row),
    // Whether they can sign in: one without a password yet (made by the operator) may be invited,
    // and accepting gives that account the invitation's role; Invite says so before sending. Only
    // to a viewer who may invite (manage_team): a member invites nobody, and whose account has a
    // password is not theirs to know.
    ...(mayInvite && { has_password: row.password_hash !== null }),
    can_make_reset_link: mayMakeResetLinkFor(viewer, row, emailed),
    reset_link_former_role: formerRoleWithholdingResetLink(viewer, row, emailed),
  }));
}

/** Locks the workspace's owners: every change that could leave it without one takes this first. */
export async function lockOwners(trx: Transaction, workspaceId: string): Promise<string[]> {
  const rows = await trx('users').where({ workspace_id: workspaceId, role: 'owner' }).forUpdate().select('id');
  return rows.map((row: { id: string }) => row.id);
}

export const lastOwnerConflict = () =>
  conflict('A workspace must keep at least one owner: make someone else an owner first.');

const validateRole = inputValidator(Type.Object({ role: OneOf(USER_ROLES) }, { additionalProperties: false }));

export async function changeMemberRole(
  db: Db,
  input: { workspace_id: string; user_id: string; role: UserRole; actor_role: UserRole | null },
  actor: Actor,
): Promise<AccountUser> {
  const { role } = validateRole({ role: input.role });
  return inTransaction(db, async (trx) => {
    const owners = await lockOwners(trx, input.workspace_id);
    const target = await findWorkspaceUser(trx, input.workspace_id, input.user_id, true);
    if (input.actor_role) {
      assertMayAssign(input.actor_role, target.role);
      assertMayAssign(input.actor_role, role);
    }
    if (target.role === role) return toAccountUser(target);
    if (target.role === 'owner' && owners.length <= 1) {
      throw lastOwnerConflict();
    }
    const [row] = await trx<AccountUserRow>('users').where({ id: target.id }).update({ role }).returning('*');
    await recordRoleChange(trx, target, role, actor);
    return toAccountUser(row as AccountUserRow);
  });
}

/**
 * What follows a change of `target`'s role to `role`, in the transaction that made it (the
 * Team page's, or an invitation accepted by an account the operator made without a password):
 * the security log's `team.role_changed`, the revocation of the open invitations they sent for
 * a role the new one may not give and of the reset links they made that it may not make, and
 * the revocation of the open reset links for their own account. The highest role they held
 * before is the database's to keep (migration 0035's trigger), whichever release changed it.
 */
export async function recordRoleChange(
  trx: Transaction,
  target: AccountUserRow,
  role: UserRole,
  actor: Actor,
): Promise<void> {
  await recordSecurityEvent(trx, {
    workspace_id: target.workspace_id,
    action: 'team.role_changed',
    actor,
    target: { type: 'user', id: target.id, label: target.email },
    details: { from: target.role, to: role },
  });
  await revokeInvitationsSentBy(trx, target, assignableRoles(role), actor, 'inviter_role_changed');
  // Whether a link was emailed or shown to copy is not kept: the stricter rule (a role below
  // the new one) holds for both, and a member whose link goes can be sent another.
  await revokeResetLinksMadeBy(trx, target, resetLinkRoles(role, false), actor, 'creator_role_changed');
  // And the open links for their own account: one made for a member by an admin is the account
  // itself, and must not become a way in to another admin's. The role change is logged.
  await revokeOwnResetLinks(trx, target.id);
}

/**
 * Removes the user and ends their sessions (the row goes, so do its sessions, by cascade; the
 * hashes of those still live are kept, rememberRemovedSessions, so their pages are told why). The
 * API tokens they made belong to the workspace and keep working (their list still names the
 * creator, by the email kept on the token), unless `revoke_tokens` asks to revoke them in the
 * same transaction: each one then recorded as `token.revoked` as a revocation by hand is. The
 * caller announces the revoked tokens once this has committed (revokeToken's rule).
 */
export async function removeMember(
  db: Db,
  input: { workspace_id: string; user_id: string; actor_role: UserRole | null; revoke_tokens?: boolean },
  actor: Actor,
): Promise<{ user: AccountUserRow; revoked_tokens: number }> {
  return inTransaction(db, async (trx) => {
    const owners = await lockOwners(trx, input.workspace_id);
    const target = await findWorkspaceUser(trx, input.workspace_id, input.user_id, true);
    if (input.actor_role) assertMayAssign(input.actor_role, target.role);
    if (target.role === 'owner' && owners.length <= 1) {
      throw lastOwnerConflict();
    }
    await rememberRemovedSessions(trx, target.id);
    await revokeUserSessions(trx, target.id);
    await recordSecurityEvent(trx, {
      workspace_id: input.workspace_id,
      action: 'team.removed',
      actor,
      target: { type: 'user', id: target.id, label: target.email },
      details: { role: target.role },
    });
    await revokeInvitationsSentBy(trx, target, [], actor, 'inviter_removed');
    await revokeResetLinksMadeBy(trx, target, [], actor, 'creator_removed');
    const revokedTokens = input.revoke_tokens ? await revokeTokensMadeBy(trx, target, actor) : 0;
    await trx('users').where({ id: target.id }).delete();
    // Who was removed: the caller forgets what it keeps about them elsewhere (their devices).
    return { user: target, revoked_tokens: revokedTokens };
  });
}

/**
 * Revokes the active API tokens `creator` made, in one statement as its siblings below do, each
 * logged as token.revoked, oldest first. Returns how many.
 */
async function revokeTokensMadeBy(trx: Transaction, creator: AccountUserRow, actor: Actor): Promise<number> {
  const revoked = await trx('api_tokens')
    .where({ workspace_id: creator.workspace_id, created_by: creator.id })
    .whereNull('revoked_at')
    .update({ revoked_at: trx.fn.now() })
    .returning<Array<{ id: string; name: string; token_hint: string; created_at: Date }>>([
      'id',
      'name',
      'token_hint',
      'created_at',
    ]);
  // RETURNING keeps no order.
  revoked.sort((a, b) => a.created_at.getTime() - b.created_at.getTime() || a.id.localeCompare(b.id));
  for (const token of revoked) {
    await recordSecurityEvent(trx, {
      workspace_id: creator.workspace_id,
      action: 'token.revoked',
      actor,
      target: { type: 'api_token', id: token.id, label: token.name },
      details: { hint: token.token_hint },
    });
  }
  return revoked.length;
}

/**
 * Revokes the open invitations `inviter` sent for a role other than `stillMayGive`, each with
 * a security-log record saying why.
 */
async function revokeInvitationsSentBy(
  trx: Transaction,
  inviter: AccountUserRow,
  stillMayGive: readonly UserRole[],
  actor: Actor,
  reason: 'inviter_removed' | 'inviter_role_changed',
): Promise<void> {
  const revoked = await trx('account_links')
    .where({ workspace_id: inviter.workspace_id, kind: 'invitation', invited_by: inviter.id })
    .whereNull('used_at')
    .whereNull('revoked_at')
    .whereNotIn('role', stillMayGive)
    .update({ revoked_at: trx.fn.now() })
    .returning<Array<{ id: string; email: string }>>(['id', 'email']);
  for (const link of revoked) {
    await recordSecurityEvent(trx, {
      workspace_id: inviter.workspace_id,
      action: 'team.invitation_revoked',
      actor,
      target: { type: 'invitation', id: link.id, label: link.email },
      details: { reason, invited_by: inviter.email },
    });
  }
}
