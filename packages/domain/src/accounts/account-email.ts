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
