import { Type } from '@sinclair/typebox';
import { conflict, invalidField, isUuid, notFound } from '@retention/core';
import { inTransaction, type Db } from '@retention/db';
import { recordSecurityEvent, type Actor } from '../security-log.js';
import { inputValidator, NameInput, withTidyName } from '../validate.js';
import { toAccountUser, type AccountUser, type AccountUserRow } from './account-user.js';
import { assertAcceptablePassword, hashPassword, verifyPassword } from './passwords.js';
import { revokeOwnResetLinks } from './password-reset.js';
import { describeUserAgent, revokeOwnSessionById, revokeUserSessions, type OwnSession } from './sessions.js';

/** The account page: a user's own name, password and sessions. */

const validateProfile = inputValidator(Type.Object({ name: NameInput(200) }, { additionalProperties: false }));

export async function updateProfile(db: Db, userId: string, input: { name: string }): Promise<AccountUser> {
  const valid = validateProfile(withTidyName(input));
  const [row] = await db<AccountUserRow>('users').where({ id: userId }).update({ name: valid.name }).returning('*');
  return toAccountUser(row as AccountUserRow);
}

/**
 * The new password must differ from the current one. Every session of the user ends, the one that changed it too: a thief holding that session's
 * cookie loses it with the others, and so do their open reset links. The caller signs the user in again (a new session).
 */
export async function changePassword(
  db: Db,
  input: {
    user_id: string;
    workspace_id: string;
    current_password: unknown;
    new_password: unknown;
  },
  actor: Actor,
): Promise<void> {
  if (typeof input.current_password !== 'string') throw invalidField('current_password', 'must be a string');
  const password = assertAcceptablePassword(input.new_password, 'new_password');
  const user = await db<AccountUserRow>('users').where({ id: input.user_id }).first();
  if (!user?.password_hash || !(await verifyPassword(input.current_password, user.password_hash))) {
    throw invalidField('current_password', 'is not your current password');
  }
  // Checked once the current password is proved, so it tells nothing new. Accepting it would
  // say "Password changed" and end every session while changing nothing.
  if (password === input.current_password) throw invalidField('new_password', 'must differ from the current one');
  const hash = await hashPassword(password);
  await inTransaction(db, async (trx) => {
    await trx('users').where({ id: input.user_id }).update({ password_hash: hash });
    const ended = await revokeUserSessions(trx, input.user_id);
    await revokeOwnResetLinks(trx, input.user_id);
    await recordSecurityEvent(trx, {
      workspace_id: input.workspace_id,
      action: 'account.password_changed',
      actor,
      target: { type: 'user', id: user.id, label: user.email },
      // The caller's own session is among those ended, and its browser goes on under a new one
      // (account-routes): the page says "your other sessions have ended", and so does the log.
      details: { other_sessions_ended: Math.max(0, ended - 1) },
    });
  });
}

export async function signOutEverywhere(
  db: Db,
  input: { user_id: string; workspace_id: string; email: string },
  actor: Actor,
): Promise<number> {
  return inTransaction(db, async (trx) => {
    const ended = await revokeUserSessions(trx, input.user_id);
    // A reset link copied before would sign in again whoever holds it.
    await revokeOwnResetLinks(trx, input.user_id);
    await recordSecurityEvent(trx, {
      workspace_id: input.workspace_id,
      action: 'account.signed_out_everywhere',
      actor,
      target: { type: 'user', id: input.user_id, label: input.email },
      details: { sessions_ended: ended },
    });
    return ended;
  });
}

/**
 * Sign out one other session of one's own (the Account page's Sessions list): by its row id,
 * never its cookie. Not found when no live session of the user has that id, whoever else's it
 * may be; refused when it is the session asking, which signs out instead.
 */
export async function signOutOtherSession(
  db: Db,
  input: { user_id: string; workspace_id: string; email: string; session_id: string; current_session_id: string },
  actor: Actor,
): Promise<void> {
  const notFoundError = () => notFound(`No session of yours with id ${JSON.stringify(input.session_id.slice(0, 60))}`);
  if (!isUuid(input.session_id)) throw notFoundError();
  const sessionId = input.session_id.toLowerCase();
  if (sessionId === input.current_session_id) {
    throw conflict('This is the session you are using now: to end it, use Sign out.');
  }
  await inTransaction(db, async (trx) => {
    const session = await trx('user_sessions')
      .where({ id: sessionId, user_id: input.user_id })
      .first<Pick<OwnSession, 'id' | 'ip_address' | 'user_agent'> | undefined>('id', 'ip_address', 'user_agent');
    if (!session || !(await revokeOwnSessionById(trx, input.user_id, sessionId))) throw notFoundError();
    await recordSecurityEvent(trx, {
      workspace_id: input.workspace_id,
      action: 'account.session_revoked',
      actor,
      target: { type: 'user', id: input.user_id, label: input.email },
      details: { session_id: sessionId, device: describeUserAgent(session.user_agent), ip_address: session.ip_address },
    });
  });
}
