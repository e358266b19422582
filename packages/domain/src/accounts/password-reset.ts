import { conflict, toIsoMillis } from '@retention/core';
import { inTransaction, pgErrorCode, type Db, type Queryable, type Transaction } from '@retention/db';
import { OPERATOR, recordSecurityEvent, type Actor } from '../security-log.js';
import { accountEmail } from './account-email.js';
import { userActor, type AccountUserRow } from './account-user.js';
import { createLink, findOpenLink, linkUrl, revokeOpenLinks, spendLink } from './one-time-links.js';
import { assertAcceptablePassword, hashPassword } from './passwords.js';
import type { UserRole } from '@retention/core';
import { revokeUserSessions } from './sessions.js';

/**
 * Password resets: a one-hour link; using it sets a password and ends every other session.
 * A link someone made for another person is only as good as its maker's standing (as an
 * invitation is its inviter's): removed or demoted, the open links they made are revoked. And a
 * user's own open links go when they change their password or sign out everywhere: a link
 * copied before either must not undo it.
 */

/** In the caller's transaction: it holds the user's row until the link is made. */
export async function createResetLink(
  trx: Transaction,
  user: { id: string; workspace_id: string; email: string },
  baseUrl: string,
  audit?: Actor,
): Promise<{ reset_url: string; expires_at: string }> {
  // The user's row is locked first, so that two requests at once leave one open link, not two.
  await trx('users').where({ id: user.id }).forUpdate().first('id');
  await revokeOpenLinks(trx, user.workspace_id, 'password_reset', user.email);
  const { token, link } = await createLink(trx, {
    kind: 'password_reset',
    workspace_id: user.workspace_id,
    email: user.email,
    user_id: user.id,
    // Who made it: the owner or admin on the Team page. Null for the operator CLI's links (its
    // actor is the operator, no member), which say so instead (migration 0036), and for those
    // people ask for themselves.
    created_by: audit?.user_id ?? null,
    made_by_operator: audit?.type === 'operator',
  });
  if (audit) {
    await recordSecurityEvent(trx, {
      workspace_id: user.workspace_id,
      // Apart from account.password_reset (the password set with it), which its holder does.
      action: 'account.reset_link_created',
      actor: audit,
      target: { type: 'user', id: user.id, label: user.email },
    });
  }
  return { reset_url: linkUrl(baseUrl, 'password_reset', token), expires_at: toIsoMillis(link.expires_at) };
}

/** A reset link for an address that has a password; null when none does (the caller says nothing). */
export async function requestPasswordReset(
  db: Db,
  email: unknown,
  baseUrl: string,
): Promise<{ user: AccountUserRow; reset_url: string; expires_at: string } | null> {
  // An address no account can have (not ASCII) gets nothing, without a look-up.
  const spelling = accountEmail(email);
  if (spelling === null) return null;
  const user = await db<AccountUserRow>('users')
    .whereRaw('lower(email) = lower(?)', [spelling])
    .whereNotNull('password_hash')
    .first();
  if (!user) return null;
  return { user, ...(await inTransaction(db, (trx) => createResetLink(trx, user, baseUrl))) };
}

export async function describeResetLink(db: Queryable, token: string): Promise<{ email: string; expires_at: string }> {
  const link = await findOpenLink(db, 'password_reset', token);
  return { email: link.email, expires_at: toIsoMillis(link.expires_at) };
}

export async function completePasswordReset(
  db: Db,
  token: string,
  password: unknown,
  request: { ip?: string | null; user_agent?: string | null } = {},
): Promise<AccountUserRow> {
  const valid = assertAcceptablePassword(password);
  // As for invitations: a made-up token costs an indexed read, not a memory-hard hash.
  await findOpenLink(db, 'password_reset', token);
  const hash = await hashPassword(valid);
  return inTransaction(db, async (trx) => {
    const link = await findOpenLink(trx, 'password_reset', token, true);
    const user = await setPassword(trx, link.user_id!, hash);
    await spendLink(trx, link.id);
    const ended = await revokeUserSessions(trx, link.user_id!);
    // A link someone made on the Team page and copied may have been spent by them, not by the
    // account's holder: the entry names its maker, so the log never shows such a reset as the
    // holder's own doing alone. The operator CLI's links (`user reset-link`) are printed to
    // whoever ran it: named as the operator CLI, as its own entries name it.
    const maker =
      link.created_by !== null && link.created_by !== link.user_id
        ? await trx('users').where({ id: link.created_by }).first<{ email: string } | undefined>('email')
        : undefined;
    const madeBy = link.made_by_operator === true ? OPERATOR.label : maker?.email;
    await recordSecurityEvent(trx, {
      workspace_id: link.workspace_id,
      action: 'account.password_reset',
      actor: userActor(user, request),
      target: { type: 'user', id: user.id, label: user.email },
      details: { sessions_ended: ended, ...(madeBy && { link_made_by: madeBy }) },
    });
    return user;
  });
}

/**
 * The account's new password. An address signs in to one workspace (a unique index): once
 * another workspace's account with the same address has taken a password, this one cannot, and
 * the link answers 409 however often it is tried, where it was a 500 that said to retry. Not
 * said in words, as for an invitation: whoever holds a link made to copy may not be the
 * address's owner (docs/dashboard-api.md, "Without email, in a deployment of several
 * workspaces"). The refusal rolls the transaction back, so the link stays unspent.
 */
async function setPassword(trx: Transaction, userId: string, hash: string): Promise<AccountUserRow> {
  try {
    const [user] = await trx<AccountUserRow>('users')
      .where({ id: userId })
      .update({ password_hash: hash })
      .returning('*');
    return user!;
  } catch (error) {
    if (pgErrorCode(error) === '23505') {
      throw conflict('This link cannot set a password for this email address; ask whoever runs this service.');
    }
    throw error;
  }
}

/**
 * Revokes `userId`'s open reset links, whoever made them: their password changed, they signed
 * out everywhere, or their role changed (a link made under the old role's rules).
 */
export async function revokeOwnResetLinks(trx: Transaction, userId: string): Promise<number> {
  return trx('account_links')
    .where({ kind: 'password_reset', user_id: userId })
    .whereNull('used_at')
    .whereNull('revoked_at')
    .update({ revoked_at: trx.fn.now() });
}

/**
 * Revokes the open reset links `maker` made for others whose role is not in `stillMayMakeFor`
 * (none when they are removed), each with a security-log record saying why, as for the
 * invitations they sent.
 */
export async function revokeResetLinksMadeBy(
  trx: Transaction,
  maker: { id: string; workspace_id: string; email: string },
  stillMayMakeFor: readonly UserRole[],
  actor: Actor,
  reason: 'creator_removed' | 'creator_role_changed',
): Promise<void> {
  const revoked = await trx('account_links')
    .where({ workspace_id: maker.workspace_id, kind: 'password_reset', created_by: maker.id })
    .whereNot('user_id', maker.id)
    .whereIn(
      'user_id',
      trx('users').where({ workspace_id: maker.workspace_id }).whereNotIn('role', stillMayMakeFor).select('id'),
    )
    .whereNull('used_at')
    .whereNull('revoked_at')
    .update({ revoked_at: trx.fn.now() })
    .returning<Array<{ user_id: string; email: string }>>(['user_id', 'email']);
  for (const link of revoked) {
    await recordSecurityEvent(trx, {
      workspace_id: maker.workspace_id,
      action: 'account.reset_link_revoked',
      actor,
      target: { type: 'user', id: link.user_id, label: link.email },
      details: { reason, created_by: maker.email },
    });
  }
}
