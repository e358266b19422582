import { useCallback, useEffect, useRef, useState } from 'react';
import { api } from '../../api/client.js';
import type { Endpoint } from '../../api/types.js';

/** How often the page reads the facts again while deliveries it queued are on their way. */
const FOLLOW_EVERY_MS = 2_000;
/**
 * How long it follows them at most: the worker sends a delivery queued again within moments, but
 * a worker that is down is not waited for forever (the timeline's window, Timeline.tsx).
 */
const FOLLOW_FOR_MS = 2 * 60_000;

/** Whether the worker made an attempt between two reads of the endpoint: a newer success or failure. */
function attemptedSince(before: Endpoint, now: Endpoint): boolean {
  return now.last_success_at !== before.last_success_at || now.last_failure_at !== before.last_failure_at;
}

/**
 * The endpoint page's facts (Last success, Consecutive failures, …) read again beside its delivery
 * log (docs/dashboard-ui.md, "An endpoint's facts follow its log"): the log's Refresh and a Resend
 * read them at once (`refresh`); Retry failed since… reads them at once and then, every 2 s, until
 * the worker has made an attempt of what it queued (`follow`), and then `onAttempted` (the page
 * reads its log again, so both show that attempt). A read that fails keeps the facts shown: the
 * log beside them says what went wrong, and offers to try again.
 */
export function useEndpointFacts(id: string, set: (endpoint: Endpoint) => void, onAttempted: () => void) {
  const [following, setFollowing] = useState<{ before: Endpoint; until: number } | null>(null);
  const onAttemptedRef = useRef(onAttempted);
  onAttemptedRef.current = onAttempted;

  const refresh = useCallback(async (): Promise<Endpoint | null> => {
    try {
      const endpoint = await api<Endpoint>('GET', `/webhooks/${encodeURIComponent(id)}`);
      set(endpoint);
      return endpoint;
    } catch {
      return null;
    }
  }, [id, set]);

  useEffect(() => {
    if (!following) return;
    let gone = false;
    const readAgain = async () => {
      const endpoint = await refresh();
      if (gone) return;
      if (endpoint && attemptedSince(following.before, endpoint)) {
        setFollowing(null);
        onAttemptedRef.current();
      } else if (Date.now() >= following.until) {
        setFollowing(null);
      } else {
        // A new object: the effect runs again, for the next read.
        setFollowing({ ...following });
      }
    };
    const timer = setTimeout(() => void readAgain(), FOLLOW_EVERY_MS);
    return () => {
      gone = true;
      clearTimeout(timer);
    };
  }, [following, refresh]);

  /** Reads the facts now, then follows them from `before` (the endpoint as shown when the deliveries were queued). */
  const follow = useCallback(
    (before: Endpoint) => {
      void refresh();
      setFollowing({ before, until: Date.now() + FOLLOW_FOR_MS });
    },
    [refresh],
  );

  return { refresh: () => void refresh(), follow };
}
