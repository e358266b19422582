/**
 * A small history router: the app has a dozen flat routes, which does not justify a routing
 * library in the first load. Paths are written without the /dashboard prefix.
 */
import { useSyncExternalStore, type AnchorHTMLAttributes, type MouseEvent } from 'react';
import { APP_BASE } from './api/client.js';
import { focusHeading } from './focus.js';

const listeners = new Set<() => void>();

function subscribe(listener: () => void): () => void {
  listeners.add(listener);
  window.addEventListener('popstate', listener);
  return () => {
    listeners.delete(listener);
    window.removeEventListener('popstate', listener);
  };
}

/**
 * A path with each run of slashes made one: `/dashboard//campaigns` (a hand-typed or pasted
 * address, a link built as base + "/" + path) is the Campaigns page, as a server reads it, where
 * it was "Page not found". The server redirects such an address (dashboard/static.ts); this is for
 * one the app itself reaches (Back to such an entry, a history entry made by script).
 */
function singleSlashes(pathname: string): string {
  return pathname.replace(/\/{2,}/g, '/');
}

/** The app path (after /dashboard) with its query string. */
export function currentPath(): string {
  const { search } = window.location;
  const pathname = singleSlashes(window.location.pathname);
  const inApp = pathname.startsWith(APP_BASE) ? pathname.slice(APP_BASE.length) : pathname;
  return (inApp || '/') + search;
}

export function usePath(): string {
  return useSyncExternalStore(subscribe, currentPath);
}

/**
 * Each history entry has an id (`history.state.entry`), under which a list keeps the rows it
 * loaded (usePaged) and the page its scroll position, so that Back returns to the list as it
 * was left: the rows Load more brought, scrolled where the reader was. The browser's own scroll
 * restoration is off: it runs before the page has its rows again, and would land short.
 */
let entries = 0;
const newEntry = () => `${Date.now().toString(36)}.${(entries += 1)}`;

function currentEntry(): string {
  const state = window.history.state as { entry?: unknown } | null;
  if (typeof state?.entry === 'string') return state.entry;
  const entry = newEntry();
  window.history.replaceState({ entry }, '');
  return entry;
}

/**
 * The history entry shown, as state: it changes with the address. A filter change makes an entry
 * of its own (AddressChange) without leaving the page, so a list keeps its rows under the entry
 * shown now, not the one it opened in.
 */
export function useEntry(): string {
  usePath();
  return currentEntry();
}

/** Where each entry was scrolled when last seen (bounded: the oldest are forgotten). */
const scrolledTo = new Map<string, number>();
const REMEMBERED_ENTRIES = 50;

export function remember<T>(store: Map<string, T>, entry: string, value: T, limit = REMEMBERED_ENTRIES): void {
  store.delete(entry);
  store.set(entry, value);
  if (store.size > limit) store.delete(store.keys().next().value!);
}

/** The app path shown now, so that Back knows the page it leaves. */
let shownPath = typeof window === 'undefined' ? '/' : currentPath();

/** The address bar shows the path as the app reads it: `/dashboard//campaigns` becomes `/dashboard/campaigns`. */
function tidyAddress(): void {
  const { pathname, search, hash } = window.location;
  const tidy = singleSlashes(pathname);
  if (tidy !== pathname) window.history.replaceState(window.history.state, '', `${tidy}${search}${hash}`);
}

if (typeof window !== 'undefined') {
  tidyAddress();
  window.history.scrollRestoration = 'manual';
  window.addEventListener('scroll', () => remember(scrolledTo, currentEntry(), window.scrollY), { passive: true });
  window.addEventListener('popstate', () => {
    tidyAddress();
    pageChange = null;
    const left = shownPath;
    shownPath = currentPath();
    const y = scrolledTo.get(currentEntry()) ?? 0;
    // After the page has rendered its restored rows (a list's come back at once, from memory).
    requestAnimationFrame(() => {
      window.scrollTo(0, y);
      if (left !== shownPath) focusAfterTraversal(left);
    });
  });
}

/**
 * Back (or Forward) to a page: the focus goes to a table's link to the page just left (the
 * list's row that was opened), so a keyboard reader goes on from that row; else to the page's
 * h1, so a screen reader says where it is (a breadcrumb back to the list is not that row).
 * Without scrolling: the list's place was just put back. Only when the focus was left behind
 * (on the body, or on the old page's element, now gone). docs/dashboard-ui.md, "Back to a list".
 */
function focusAfterTraversal(left: string): void {
  const active = document.activeElement;
  if (active && active !== document.body && active.isConnected) return;
  const row = [...document.querySelectorAll<HTMLElement>('main table a[href]')].find(
    (link) => link.getAttribute('href') === `${APP_BASE}${left}`,
  );
  if (row) row.focus({ preventScroll: true });
  else focusHeading();
}

/**
 * A page change made by the app (a link, a redirect) that is yet to move the focus to the new
 * page (route-focus.ts): the page it goes to, and the element focused when it was asked for.
 * Not Back or Forward (the browser's own traversal, where the list-back scroll is put back), nor a
 * change of the same page's query string (a filter, Load more's address).
 */
let pageChange: { route: string; from: Element | null } | null = null;

/**
 * The page change to `route` made by navigate(), once: null when there is none. One to another
 * route is left for it: a page that sends on at once (Settings to its first tab) changes it.
 */
export function takePageChange(route: string): { from: Element | null } | null {
  if (pageChange?.route !== route) return null;
  const change = pageChange;
  pageChange = null;
  return change;
}

/**
 * The app path (with its query) of the history entry before this one, when the app made this
 * entry by a page change from it (`history.state.from`); null when the browser made it (the first
 * load, a link opened in a new tab). A replace keeps it: the entry before is still that one.
 */
function cameFrom(): string | null {
  const from = (window.history.state as { from?: unknown } | null)?.from;
  return typeof from === 'string' ? from : null;
}

export function navigate(to: string, options: { replace?: boolean; keepScroll?: boolean } = {}): void {
  const url = `${APP_BASE}${to}`;
  const route = pathOnly(to);
  pageChange = route === pathOnly(currentPath()) ? null : { route, from: document.activeElement };
  const from = cameFrom();
  if (options.replace) window.history.replaceState({ entry: currentEntry(), ...(from !== null && { from }) }, '', url);
  else {
    // The entry left keeps where it is scrolled now: the scroll event of a scroll just made (a row
    // brought into view) comes at the browser's next frame, by then under the new entry.
    remember(scrolledTo, currentEntry(), window.scrollY);
    const entry = newEntry();
    window.history.pushState({ entry, from: shownPath }, '', url);
    // A new entry left where the page was (a filter change): Forward back to it lands there too.
    if (options.keepScroll) remember(scrolledTo, entry, window.scrollY);
  }
  shownPath = currentPath();
  for (const listener of listeners) listener();
  if (!options.keepScroll) window.scrollTo(0, 0);
}

/** `/settings/tokens?x=1` -> `/settings/tokens`. */
export function pathOnly(path: string): string {
  return path.split('?')[0]!.replace(/\/+$/, '') || '/';
}

/**
 * How a change of the address's filters goes into the history (docs/dashboard-ui.md, "Filters and
 * Back"). By default it is a new entry, so Back undoes it (a select, a checkbox, Clear filters, a
 * search applied, a period). `replace`: a correction the app makes by itself (a missing zone
 * filled in), which Back must not land on only to see it rewrite itself. `burst`: the control
 * that changed, when it changes as it is typed in (a date field, a digit or an arrow key at a
 * time): the first change of a burst makes the entry, the next ones replace it.
 */
export interface AddressChange {
  replace?: boolean;
  burst?: string;
}

/**
 * A burst continues while the same control of the same page changes again within this time of
 * its last change, the address still at the entry it made (no Back, no other change between).
 */
const BURST_MS = 1500;
let burst: { name: string; route: string; entry: string; at: number } | null = null;

/**
 * The page's query string as state: filters live in the address, so a filtered list can be
 * bookmarked, shared and reached again with Back. Setting makes a history entry (see
 * AddressChange); empty values are dropped. The same address again makes none.
 */
export function useSearchParams(): [URLSearchParams, (next: Record<string, string>, change?: AddressChange) => void] {
  const path = usePath();
  const search = path.includes('?') ? path.slice(path.indexOf('?')) : '';
  const params = new URLSearchParams(search);
  const set = (next: Record<string, string>, change: AddressChange = {}) => {
    const merged = new URLSearchParams(search);
    for (const [key, value] of Object.entries(next)) {
      if (value) merged.set(key, value);
      else merged.delete(key);
    }
    // A slash and a comma are allowed in a query string (RFC 3986): `tz=Pacific/Auckland` and
    // `action=token.created,token.revoked` read as they mean, where URLSearchParams writes
    // `Pacific%2FAuckland` and `token.created%2Ctoken.revoked`; both read back the same.
    const text = merged.toString().replace(/%2F/gi, '/').replace(/%2C/gi, ',');
    const route = pathOnly(path);
    const to = `${route}${text ? `?${text}` : ''}`;
    const now = Date.now();
    const inBurst =
      change.burst !== undefined &&
      burst !== null &&
      burst.name === change.burst &&
      burst.route === route &&
      burst.entry === currentEntry() &&
      now - burst.at < BURST_MS;
    navigate(to, { replace: Boolean(change.replace) || inBurst || to === currentPath(), keepScroll: true });
    if (change.burst !== undefined) burst = { name: change.burst, route, entry: currentEntry(), at: now };
    else if (!change.replace) burst = null;
  };
  return [params, set];
}

/**
 * The named filters of a list page from the address (an absent one is ''), and a setter that
 * sets the given ones (a history entry as `change` says): the filters of the list and of its
 * export are the same query.
 */
export function useFilters<Name extends string>(
  names: readonly Name[],
): [Record<Name, string>, (next: Partial<Record<Name, string>>, change?: AddressChange) => void] {
  const [params, setParams] = useSearchParams();
  const filters = Object.fromEntries(names.map((name) => [name, params.get(name) ?? ''])) as Record<Name, string>;
  return [filters, (next, change) => setParams(next as Record<string, string>, change)];
}

type LinkProps = Omit<AnchorHTMLAttributes<HTMLAnchorElement>, 'href'> & { to: string };

export function Link({ to, onClick, ...rest }: LinkProps) {
  const handle = (event: MouseEvent<HTMLAnchorElement>) => {
    onClick?.(event);
    if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey) return;
    event.preventDefault();
    navigate(to);
  };
  return <a href={`${APP_BASE}${to}`} onClick={handle} {...rest} />;
}

/**
 * A detail page's breadcrumb to its list (`to`: `/campaigns`, `/customers`, `/cancel-sessions`).
 * Opened from that list (the entry before this one is it, `cameFrom`), it goes back to it as the
 * browser's Back does: with the filters and search it had, the rows Load more brought and its
 * scroll, the focus on the row that was opened. It went to the bare list, filters dropped, while
 * Back kept them. Opened any other way (a link on another page, a new tab), it is a link to the
 * list. Its href is the list with its query either way, for a new tab or a copied link.
 */
export function ListCrumb({ to, children }: { to: string; children: string }) {
  const from = cameFrom();
  if (from === null || pathOnly(from) !== to) return <Link to={to}>{children}</Link>;
  const handle = (event: MouseEvent<HTMLAnchorElement>) => {
    if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey) return;
    event.preventDefault();
    window.history.back();
  };
  return (
    <a href={`${APP_BASE}${from}`} onClick={handle}>
      {children}
    </a>
  );
}

/** A navigation link that marks itself as the current page. */
export function NavLink({ to, exact, ...rest }: LinkProps & { exact?: boolean }) {
  const here = pathOnly(usePath());
  const active = exact ? here === to : here === to || here.startsWith(`${to}/`);
  return <Link to={to} aria-current={active ? 'page' : undefined} {...rest} />;
}

/** The page signing in leads to: the one the viewer was headed to, when `next` names a page of this app. */
export function signInDestination(): string {
  const next = new URLSearchParams(window.location.search).get('next');
  return next && next.startsWith('/') && !next.startsWith('//') && !next.startsWith('/\\') ? next : '/';
}

/** After signing in: a fresh page load (no state of another session survives) at signInDestination(). */
export function afterSignIn(): void {
  window.location.assign(`${APP_BASE}${signInDestination()}`);
}
