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

/**
 * A keyset-paged list: the first page per `key`, then Load more appends the next. Back to a list
 * shows the rows it had loaded at once, from memory (the scroll then lands where it was), and
 * asks for them again behind them (`refresh`).
 *
 * A `null` key is a list with nothing to ask yet (its filters can match nothing, or name a value
 * the list does not have): nothing is fetched, and it has no rows, no error and is not loading.
 *
 * The rows returned are always those of the `key` given: in the render where the key changes,
 * before the effect that asks for its first page has run, the list is already loading with no
 * rows, never the previous key's rows, nor, when they were none, a list that read as empty (Clear
 * filters showed "No deliveries yet." until the unfiltered rows came).
 */
export function usePaged<T>(
  fetchPage: (cursor: string | null) => Promise<List<T> & ListCount>,
  key: string | null,
): Paged<T> {
  // The entry shown now: a filter change, a new entry (router.tsx), keeps the list mounted.
  const entry = useEntry();
  const [restored] = useState(() => {
    const pages = key === null ? undefined : loadedPages.get(entry);
    return pages?.key === key ? pages : null;
  });
  const skipFirstLoad = useRef(restored !== null);
  /** The key the state below is about: the last one the effect below started (or the first). */
  const [stateKey, setStateKey] = useState(key);
  const [items, setItems] = useState<T[]>((restored?.items as T[] | undefined) ?? []);
  const [cursor, setCursor] = useState<string | null>(restored?.cursor ?? null);
  const [hasMore, setHasMore] = useState(restored?.hasMore ?? false);
  const [total, setTotal] = useState<ListTotal | null>(restored?.total ?? null);
  const [error, setError] = useState<string | null>(null);
  const [refusal, setRefusal] = useState<ParamRefusal | null>(null);
  const [loading, setLoading] = useState(restored === null && key !== null);
  const [round, setRound] = useState(0);
  const fetchRef = useRef(fetchPage);
  fetchRef.current = fetchPage;
  const generation = useRef(0);

  const run = useCallback((after: string | null, append: boolean) => {
    const mine = ++generation.current;
    setLoading(true);
    setError(null);
    setRefusal(null);
    fetchRef.current(after).then(
      (page) => {
        if (mine !== generation.current) return;
        setItems((previous) => (append ? [...previous, ...page.data] : page.data));
        // Load more's pages are not counted: the first page's count stays.
        if (!append) setTotal(totalOf(page));
        setCursor(page.next_cursor);
        setHasMore(page.has_more);
        setLoading(false);
      },
      (failure: unknown) => {
        if (mine !== generation.current) return;
        setError(errorMessage(failure));
        setRefusal(paramRefusal(failure));
        setLoading(false);
      },
    );
  }, []);

  /**
   * The restored rows asked for again, as many as were shown, page after page, and swapped in at
   * once: a row changed meanwhile (a campaign marked recovered on its own page) is not left
   * stale, and the rows, so the scroll, stay where they were. A failure keeps the restored rows;
   * Load more meanwhile wins (the generation).
   */
  const refresh = useCallback(async (count: number) => {
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
      setItems(rows);
      setCursor(after);
      setHasMore(more);
      setTotal(counted);
    } catch {
      // The rows shown stay; the next Load more or visit asks again.
    }
  }, []);

  useEffect(() => {
    setStateKey(key);
    if (skipFirstLoad.current) {
      skipFirstLoad.current = false;
      void refresh(restored!.items.length);
      return;
    }
    setItems([]);
    setCursor(null);
    setHasMore(false);
    setTotal(null);
    if (key !== null) {
      run(null, false);
      return;
    }
    // Nothing to ask: an answer still on its way for the key before is dropped.
    generation.current += 1;
    setError(null);
    setRefusal(null);
    setLoading(false);
  }, [key, round, run, refresh, restored]);

  // The state is another key's until the effect above has run for this one.
  const current = stateKey === key;
  useEffect(() => {
    if (current && key !== null && !loading && error === null) {
      remember(loadedPages, entry, { key, items, cursor, hasMore, total }, REMEMBERED_LISTS);
    }
  }, [current, entry, key, items, cursor, hasMore, total, loading, error]);

  if (!current) {
    return {
      items: [],
      total: null,
      error: null,
      refusal: null,
      loading: key !== null,
      hasMore: false,
      loadMore: () => {},
      reload: () => setRound((value) => value + 1),
      change: () => {},
    };
  }
  return {
    items,
    total,
    error,
    refusal,
    loading,
    hasMore,
    loadMore: () => {
      if (key !== null) run(cursor, true);
    },
    reload: () => {
      if (key !== null) setRound((value) => value + 1);
    },
    change: (update) => setItems(update),
  };
}
