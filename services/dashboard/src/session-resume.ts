import { useSyncExternalStore } from 'react';

/**
 * The one place where requests wait while a session that ended under a page is signed in again
 * (docs/dashboard-ui.md, "A session that ends under a page"). A 401 on a signed-in page used to
 * go to the sign-in page, which dropped whatever the page held: the text typed into a form, an
 * open Edit dialog. Now the request that met the 401 waits here, the page asks for the password
 * in place (SignInAgainDialog), and the request is asked again once the same person is signed in
 * again, so the Save that met the 401 completes with what was typed. Every request that meets a
 * 401 meanwhile waits for the same answer: one dialog, however many requests.
 *
 * Nothing of the request or the page is kept here, only the promise the waiting requests hold.
 */
let waiting: { promise: Promise<boolean>; settle: (signedInAgain: boolean) => void } | null = null;
const listeners = new Set<() => void>();

function changed(): void {
  for (const listener of listeners) listener();
}

/**
 * Waits for the person to sign in again: true once they have (the request can be asked again),
 * false when they closed the dialog instead (the request fails as it would have).
 */
export function waitForSignInAgain(): Promise<boolean> {
  if (!waiting) {
    let settle!: (signedInAgain: boolean) => void;
    const promise = new Promise<boolean>((resolve) => (settle = resolve));
    waiting = { promise, settle };
    changed();
  }
  return waiting.promise;
}

/**
 * The same person is signed in again (in the dialog, or in another tab: the cookie is the
 * browser's): the waiting requests are asked again. Whether any were waiting.
 */
export function signedInAgain(): boolean {
  return finish(true);
}

/** The dialog was closed without signing in: the waiting requests fail with their 401. */
export function closedWithoutSigningIn(): void {
  finish(false);
}

function finish(signedIn: boolean): boolean {
  if (!waiting) return false;
  const { settle } = waiting;
  waiting = null;
  settle(signedIn);
  changed();
  return true;
}

function subscribe(listener: () => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

/** Whether requests are waiting for the person to sign in again: the dialog is shown meanwhile. */
export function useSignInAgainAsked(): boolean {
  return useSyncExternalStore(subscribe, () => waiting !== null);
}
