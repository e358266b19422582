import { invalidCredentials, invalidField } from '@retention/core';
import type { Queryable } from '@retention/db';
import { accountEmail } from './account-email.js';
import type { AccountUserRow } from './account-user.js';
import { burnPasswordCheck, MAX_PASSWORD_LENGTH, verifyPassword } from './passwords.js';

/**
 * Checks an email and password. Unknown address, no password yet or a wrong password: the
 * same error after the same work, so neither the message nor the timing says which.
 */
export async function checkCredentials(db: Queryable, email: unknown, password: unknown): Promise<AccountUserRow> {
  if (typeof email !== 'string' || email.length === 0 || email.length > 320)
    throw invalidField('email', 'must be an email address');
  if (typeof password !== 'string') throw invalidField('password', 'must be a string');
  // No password can be longer than MAX_PASSWORD_LENGTH characters (assertAcceptablePassword), so a
  // longer one is refused, saying so, before any look-up and without an argon2 run over it. Counted
  // in characters (code points) as when it was set; a character is at most two UTF-16 code units,
  // so a longer string is refused without counting. No minimum here: a short password is wrong.
  if (
    password.length === 0 ||
    password.length > MAX_PASSWORD_LENGTH * 2 ||
    [...password].length > MAX_PASSWORD_LENGTH
  ) {
    throw invalidField('password', `must be 1 to ${MAX_PASSWORD_LENGTH} characters`);
  }
  // An address no account can have (not ASCII) is answered as an unknown one, without a look-up.
  const spelling = accountEmail(email);
  const user =
    spelling === null
      ? undefined
      : await db<AccountUserRow>('users')
          .whereRaw('lower(email) = lower(?)', [spelling])
          .whereNotNull('password_hash')
          .first();
  if (!user?.password_hash) {
    await burnPasswordCheck(password);
    throw invalidCredentials();
  }
  if (!(await verifyPassword(password, user.password_hash))) throw invalidCredentials();
  return user;
}
