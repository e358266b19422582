import { Type } from '@sinclair/typebox';

/**
 * The one spelling of an email an account is looked up and limited by: printable ASCII,
 * lower-cased. Accounts only ever get ASCII addresses (users and invitations are validated by
 * the `email` format, which is ASCII-only), so anything else is no account's, and is refused
 * before any look-up. Without this, an address such as `owner@northwİnd.example` reached the
 * account through PostgreSQL's `lower()` (`İ` lowers to `i`) while JavaScript's `toLowerCase()`
 * (`İ` to `i̇`, two code points) gave it limits of its own: one account, many limit keys.
 */
const ACCOUNT_EMAIL = /^[\x21-\x7e]{1,320}$/;

/** The account spelling of `email`, or null when it cannot be any account's address. */
export function accountEmail(email: unknown): string | null {
  if (typeof email !== 'string' || !ACCOUNT_EMAIL.test(email)) return null;
  // ASCII only, so this lower-cases A-Z and nothing else, as PostgreSQL's lower() does.
  return email.toLowerCase();
}

/**
 * An address a new account or invitation may have: the `email` format, and at most 64 characters
 * before the @ and 254 in all, the limits of RFC 5321 (a mail server may refuse a longer one,
 * and the invitation or reset email would never arrive). Addresses stored before the rule still
 * sign in: it is checked only where an address is first given.
 */
export const AccountEmailInput = () =>
  Type.Unsafe<string>({
    // Each part its own words: a malformed address is not told about lengths.
    allOf: [
      {
        type: 'string',
        format: 'email',
        maxLength: 254,
        errorMessage: 'must be an email address such as ann@example.com',
      },
      { type: 'string', pattern: '^[^@]{1,64}@', errorMessage: 'must have at most 64 characters before the @' },
    ],
  });
