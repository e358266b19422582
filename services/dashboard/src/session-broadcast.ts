/**
 * Tells this browser's other tabs of the dashboard who is signed in, each time a tab learns it
 * (GET /me answered): the session cookie is the browser's, so a sign-in in one tab is the
 * session of every tab. A tab built for another person starts afresh (session-switch.ts) rather
 * than send its person's typed text with the new person's cookie; a tab of the same person
 * waiting for its person to sign in again goes on (session-resume.ts). Only the user's id is
 * sent, between tabs of this origin; nothing is stored. Browsers without BroadcastChannel keep
 * each tab to itself, as before.
 */
const CHANNEL = 'retention.session';

interface Announcement {
  signedIn: string;
}

const channel = typeof BroadcastChannel === 'undefined' ? null : new BroadcastChannel(CHANNEL);

export function announceSignedIn(userId: string): void {
  channel?.postMessage({ signedIn: userId } satisfies Announcement);
}

/** Calls `handler` with the user id another tab found signed in; returns the unsubscribe. */
export function onSignedInElsewhere(handler: (userId: string) => void): () => void {
  if (!channel) return () => undefined;
  const listener = (event: MessageEvent<unknown>) => {
    const userId = (event.data as Partial<Announcement> | null)?.signedIn;
    if (typeof userId === 'string') handler(userId);
  };
  channel.addEventListener('message', listener);
  return () => channel.removeEventListener('message', listener);
}
