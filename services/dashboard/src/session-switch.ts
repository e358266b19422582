import { APP_BASE } from './api/client.js';
import type { Me, SignedIn } from './api/types.js';

/**
 * Who a page was built for against who is signed in now. A page holds what its person typed
 * and read; it goes on only for that same person in the same workspace. Anyone else signing in
 * (in the sign-in-again dialog, or in another tab, whose cookie this tab now sends) gets a fresh
 * page, so they neither see nor send what the first person left in it.
 */
export function samePerson(shown: Me, now: Pick<SignedIn, 'user' | 'workspace'>): boolean {
  return shown.user.id === now.user.id && shown.workspace.id === now.workspace.id;
}

/**
 * A fresh load of the Overview: nothing of the page before survives it (its state was only in
 * memory), and not its address either, whose query can hold what was typed into a filter.
 */
export function startAfresh(): void {
  window.location.assign(`${APP_BASE}/`);
}
