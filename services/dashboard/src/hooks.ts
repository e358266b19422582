import { useCallback, useEffect, useRef, useState } from 'react';
import { ApiError, errorMessage } from './api/client.js';
import type { List, ListCount } from './api/types.js';
import { remember, useEntry } from './router.js';

export interface Loaded<T> {
  data: T | undefined;
  error: string | null;
  /** The API answered 404: nothing to try again (another workspace's id, or none at all). */
  notFound: boolean;
  loading: boolean;
  reload: () => void;
  set: (value: T) => void;
}

/** Loads once per `key`; `reload` runs it again. Answers for an older key are dropped. */
export function useLoad<T>(load: (signal: AbortSignal) => Promise<T>, key: string): Loaded<T> {
  // The failure itself is kept; its message and whether it was a 404 are read off it below.
  const [state, setState] = useState<{ data: T | undefined; failure: Error | null; loading: boolean }>({
    data: undefined,
    failure: null,
    loading: true,
  });
  const [round, setRound] = useState(0);
  const loadRef = useRef(load);
  loadRef.current = load;

  useEffect(() => {
    const controller = new AbortController();
    setState((previous) => ({ ...previous, loading: true, failure: null }));
    loadRef.current(controller.signal).then(
      (data) => !controller.signal.aborted && setState({ data, failure: null, loading: false }),
      (failure: ApiError | Error) =>
        !controller.signal.aborted && setState({ data: undefined, failure, loading: false }),
    );
    return () => controller.abort();
  }, [key, round]);

  const reload = useCallback(() => setRound((value) => value + 1), []);
  const set = useCallback((data: T) => setState({ data, failure: null, loading: false }), []);
  const { data, failure, loading } = state;
  return {
    data,
    loading,
    error: failure && errorMessage(failure),
    notFound: failure instanceof ApiError && failure.status === 404,
    reload,
    set,
  };
}

/** A 400 `invalid_param` naming one query parameter (docs/dashboard-api.md, "Conventions"). */
export interface ParamRefusal {
  param: string;
  /** The server's words, `param: reason`. */
  message: string;
}

/**
 * The parameter a failure refused, when it is a 400 `invalid_param` about one: a list asked with a
 * filter value its server does not have, which asking again cannot mend (any other failure can be
 * tried again).
 */
function paramRefusal(failure: unknown): ParamRefusal | null {
  if (!(failure instanceof ApiError) || failure.status !== 400 || failure.type !== 'invalid_param') return null;
  return failure.param ? { param: failure.param, message: failure.message } : null;
}

/** How many rows a list's filters match, as its first page said: `total`, or more than it when `capped`. */
export interface ListTotal {
  total: number;
  capped: boolean;
}

/** A page's count (ListCount), when it has one. */
function totalOf(page: ListCount): ListTotal | null {
  return page.total === undefined ? null : { total: page.total, capped: page.total_capped === true };
}

export interface Paged<T> {
  /** The key the rows are of (usePaged's): a new one is another list, whether asked or restored. */
  key: string | null;
  items: T[];
  /**
   * How many rows the list's filters match, when its first page is the whole list and says so (a
   * dashboard list's, ListCount); null otherwise, when the page asks the count route instead
   * (ListPage's useListCount).
   */
  total: ListTotal | null;
  error: string | null;
  /** The last load's failure, when it was a refused parameter (paramRefusal). */
  refusal: ParamRefusal | null;
  loading: boolean;
  hasMore: boolean;
  loadMore: () => void;
  reload: () => void;
  /**
   * The rows shown changed in place, nothing read: a row the page already has (a Resend's attempt,
   * from the Resend's answer) added at the top, a row's field brought up to date. The rows shown
   * keep their state and the focus, which `reload`, starting from no rows, would drop; Load more's
   * cursor, the oldest row read, stays, so it goes on with no row twice and none missed. Reading
   * the rows again for one new row read a whole page more past 50, 100… shown (it read as many as
   * shown, plus one, page after page).
   */
  change: (update: (items: T[]) => T[]) => void;
}

/** The pages a list had loaded, by history entry (router.tsx): Back brings them back. */
interface LoadedPages {
  key: string;
  items: unknown[];
  cursor: string | null;
  hasMore: boolean;
  total: ListTotal | null;
}
const loadedPages = new Map<string, LoadedPages>();
/** Lists remembered at most: each holds the rows it loaded, so memory stays bounded. */
const REMEMBERED_LISTS = 20;

/** The pages kept under `entry`, when they are of `key` (the same list with the same filters). */
function rememberedPages(entry: string, key: string | null): LoadedPages | null {
  const pages = key === null ? undefined : loadedPages.get(entry);
  return pages?.key === key ? pages : null;
}

/**
 * What a list asks the server for once its state is shown: its first page, the rows it restored
 * again (`count` of them), or nothing (a `null` key). A new object for each, so each is asked once.
 */
type Ask = { kind: 'first'; key: string } | { kind: 'again'; key: string; count: number } | { kind: 'none' };

/** A list's state, always of one history entry and one key: never the rows of another. */
interface ListState<T> {
  entry: string;
  key: string | null;
  items: T[];
  cursor: string | null;
  hasMore: boolean;
  total: ListTotal | null;
  error: string | null;
  refusal: ParamRefusal | null;
  loading: boolean;
  ask: Ask;
}

/** A list shown afresh: no rows, loading its first page (nothing, for a `null` key). */
function fresh<T>(entry: string, key: string | null): ListState<T> {
  return {
    entry,
    key,
    items: [],
    cursor: null,
    hasMore: false,
    total: null,
    error: null,
    refusal: null,
    loading: key !== null,
    ask: key === null ? { kind: 'none' } : { kind: 'first', key },
  };
}

/** A list shown from the pages kept under its entry, asked for again behind them. */
function restored<T>(entry: string, pages: LoadedPages): ListState<T> {
  return {
    ...fresh<T>(entry, pages.key),
    items: pages.items as T[],
    cursor: pages.cursor,
    hasMore: pages.hasMore,
    total: pages.total,
    loading: false,
    ask: { kind: 'again', key: pages.key, count: pages.items.length },
  };
}

/**
 * The list's state at `entry` and `key`, from the state it had: the pages kept under that entry
 * when there are some of that key (Back or Forward to it, in the page or into it), else the rows
 * it has when only the entry changed (the same list), else afresh.
 */
function shownAt<T>(state: ListState<T> | null, entry: string, key: string | null): ListState<T> {
  const pages = rememberedPages(entry, key);
  if (pages) return restored(entry, pages);
  if (state !== null && state.key === key) return { ...state, entry };
  return fresh(entry, key);
}

/**
 * A keyset-paged list: the first page per `key`, then Load more appends the next. Back (or
 * Forward) to a list shows the rows it had loaded at once, from memory (the scroll then lands
 * where it was), and asks for them again behind them (`refresh`): into the page from another
 * one, and between two filter states of the same page (a filter change is an entry of its own,
 * router.tsx's AddressChange, the page staying mounted).
 *
 * A `null` key is a list with nothing to ask yet (its filters can match nothing, or name a value
 * the list does not have): nothing is fetched, and it has no rows, no error and is not loading.
 *
 * The rows returned are always those of the `key` given: in the render where the key changes,
 * the state is moved to it in that render (React's "adjusting state when a prop changes"), so the
 * list is already loading with no rows, never the previous key's rows, nor, when they were none,
 * a list that read as empty (Clear filters showed "No deliveries yet." until the unfiltered rows
 * came); or, restored, it has its rows before the browser paints (and scrolls). An answer that
 * comes for another key than the state's is dropped.
 */
export function usePaged<T>(
  fetchPage: (cursor: string | null) => Promise<List<T> & ListCount>,
  key: string | null,
): Paged<T> {
  // The entry shown now: a filter change, a new entry (router.tsx), keeps the list mounted.
  const entry = useEntry();
  const [kept, setState] = useState<ListState<T>>(() => shownAt<T>(null, entry, key));
  let state = kept;
  if (state.entry !== entry || state.key !== key) {
    state = shownAt(state, entry, key);
    setState(state);
  }
  const fetchRef = useRef(fetchPage);
  fetchRef.current = fetchPage;
  /** The last request started: an answer to an older one (a key left, a Load more since) is dropped. */
  const generation = useRef(0);

  const run = useCallback((key: string, after: string | null, append: boolean) => {
    const mine = ++generation.current;
    const update = (change: (state: ListState<T>) => Partial<ListState<T>>) =>
      setState((previous) =>
        mine !== generation.current || previous.key !== key ? previous : { ...previous, ...change(previous) },
      );
    update(() => ({ loading: true, error: null, refusal: null }));
    fetchRef.current(after).then(
      (page) =>
        update((previous) => ({
          items: append ? [...previous.items, ...page.data] : page.data,
          // Load more's pages are not counted: the first page's count stays.
          total: append ? previous.total : totalOf(page),
          cursor: page.next_cursor,
          hasMore: page.has_more,
          loading: false,
        })),
      (failure: unknown) =>
        update(() => ({ error: errorMessage(failure), refusal: paramRefusal(failure), loading: false })),
    );
  }, []);

  /**
   * The restored rows asked for again, as many as were shown, page after page, and swapped in at
   * once: a row changed meanwhile (a campaign marked recovered on its own page) is not left
   * stale, and the rows, so the scroll, stay where they were. A failure keeps the restored rows;
   * Load more meanwhile wins (the generation).
   */
  const refresh = useCallback(async (key: string, count: number) => {
    const mine = ++generation.current;
    try {
      let rows: T[] = [];
      let after: string | null = null;
      let more: boolean;
      let counted: ListTotal | null = null;
      // The first page at least: a list that had no rows is asked again too.
      do {
        const page = await fetchRef.current(after);
        if (mine !== generation.current) return;
        if (after === null) counted = totalOf(page);
        rows = [...rows, ...page.data];
        after = page.next_cursor;
        more = page.has_more;
      } while (more && rows.length < count);
      const found = { items: rows, cursor: after, hasMore: more, total: counted };
      setState((previous) =>
        mine !== generation.current || previous.key !== key ? previous : { ...previous, ...found },
      );
    } catch {
      // The rows shown stay; the next Load more or visit asks again.
    }
  }, []);

  const { ask } = state;
  useEffect(() => {
    if (ask.kind === 'first') run(ask.key, null, false);
    else if (ask.kind === 'again') void refresh(ask.key, ask.count);
    // Nothing to ask: an answer still on its way for the key before is dropped.
    else generation.current += 1;
  }, [ask, run, refresh]);

  useEffect(() => {
    if (state.key !== null && !state.loading && state.error === null) {
      const { key, items, cursor, hasMore, total } = state;
      remember(loadedPages, state.entry, { key, items, cursor, hasMore, total }, REMEMBERED_LISTS);
    }
  }, [state]);

  return {
    key: state.key,
    items: state.items,
    total: state.total,
    error: state.error,
    refusal: state.refusal,
    loading: state.loading,
    hasMore: state.hasMore,
    loadMore: () => {
      if (state.key !== null) run(state.key, state.cursor, true);
    },
    reload: () => setState((previous) => fresh(previous.entry, previous.key)),
    change: (update) => setState((previous) => ({ ...previous, items: update(previous.items) })),
  };
}
