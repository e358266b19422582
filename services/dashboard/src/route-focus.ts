import { useEffect } from 'react';
import { focusByScript, focusHeading } from './focus.js';
import { takePageChange } from './router.js';

/** How long a page whose code or record is still loading may take to show its heading. */
const HEADING_WAIT_MS = 10_000;

/**
 * After the app changes page (a navigation link, a row's link, a breadcrumb, "Forgot your
 * password?"), the focus goes to the new page's h1, which screen readers then read: it stayed on
 * the link (a navigation link, still there) or fell to the body (a link the old page took away),
 * and only the tab's title said anything had happened. Not on the first load, nor on Back and
 * Forward (router.tsx's focusAfterTraversal has those), nor when only the query string changes (filters, Load more). A page that
 * has put the focus somewhere of its own (the sign-in's Email field, an invitation's Name) keeps it. The heading takes
 * the focus without scrolling, since navigate() has just put the page where it belongs.
 *
 * A page whose heading is not there yet (its code or its record still loading) has the focus on
 * `main`, as a closed dialog's gone opener does (dialog-focus.ts), and its heading takes it when
 * it comes, unless the viewer has moved it meanwhile.
 */
export function useFocusOnPageChange(route: string): void {
  useEffect(() => {
    const change = takePageChange(route);
    if (!change) return;
    const main = document.querySelector<HTMLElement>('main');
    const active = document.activeElement;
    // Where the old page left it: on the link, on the body (the link went with the old page), or
    // on `main` (a dialog whose opener went, Delete endpoint's).
    const leftBehind = !active || active === document.body || active === change.from || active === main;
    if (!leftBehind || focusHeading() || !main) return;
    focusByScript(main, { preventScroll: true });
    const observer = new MutationObserver(() => {
      if (document.activeElement !== main) observer.disconnect();
      else if (focusHeading()) observer.disconnect();
    });
    observer.observe(main, { subtree: true, childList: true });
    const timer = window.setTimeout(() => observer.disconnect(), HEADING_WAIT_MS);
    return () => {
      observer.disconnect();
      window.clearTimeout(timer);
    };
  }, [route]);
}
