/**
 * Whether this browser had a session here that it did not end itself, so that a page loaded after
 * the session ended elsewhere (Sign out everywhere on another device, a password changed, an
 * expiry) can say so on the sign-in page, as a page open at the time does (App's session-ended
 * handler). Only a flag: nothing of the session is kept. Storage refused (a private window's
 * quota, a policy) makes it say nothing, as before.
 */
const KEY = 'retention.had-session';

export function rememberSession(): void {
  try {
    localStorage.setItem(KEY, '1');
  } catch {
    // Nothing to remember with: the sign-in page then gives no reason.
  }
}

export function forgetSession(): void {
  try {
    localStorage.removeItem(KEY);
  } catch {
    // As above.
  }
}

export function hadSession(): boolean {
  try {
    return localStorage.getItem(KEY) === '1';
  } catch {
    return false;
  }
}
