import { useEffect } from 'react';

/**
 * Reads a page's data again every `everyMs` while `active` (an import queued or running, an event
 * on its way to the endpoints), so its progress moves without a reload; not while the page is hidden (another tab in front, a
 * minimised window: nobody is watching, and the server is spared), and at once when it is shown
 * again, so what it shows then is not a stale count. Stops when `active` turns false. `shown` is
 * the data on the page: each answer read schedules the next read, so a slow answer is never
 * asked for twice at once.
 */
export function useRefreshWhile(active: boolean, shown: unknown, reload: () => void, everyMs: number): void {
  useEffect(() => {
    if (!active) return;
    let timer: number | undefined;
    const schedule = () => {
      window.clearTimeout(timer);
      timer = document.visibilityState === 'hidden' ? undefined : window.setTimeout(reload, everyMs);
    };
    const onVisibility = () => {
      if (document.visibilityState === 'hidden') window.clearTimeout(timer);
      else reload();
    };
    schedule();
    document.addEventListener('visibilitychange', onVisibility);
    return () => {
      window.clearTimeout(timer);
      document.removeEventListener('visibilitychange', onVisibility);
    };
  }, [active, shown, reload, everyMs]);
}
