import { useCallback, useEffect, useRef, useState } from 'react';
import { ApiError, errorMessage } from './api/client.js';
import type { List } from './api/types.js';

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

export interface Paged<T> {
  items: T[];
  error: string | null;
  loading: boolean;
  hasMore: boolean;
  loadMore: () => void;
  reload: () => void;
}

/** A keyset-paged list: the first page per `key`, then Load more appends the next. */
export function usePaged<T>(fetchPage: (cursor: string | null) => Promise<List<T>>, key: string): Paged<T> {
  const [items, setItems] = useState<T[]>([]);
  const [cursor, setCursor] = useState<string | null>(null);
  const [hasMore, setHasMore] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [loading, setLoading] = useState(true);
  const [round, setRound] = useState(0);
  const fetchRef = useRef(fetchPage);
  fetchRef.current = fetchPage;
  const generation = useRef(0);

  const run = useCallback((after: string | null, append: boolean) => {
    const mine = ++generation.current;
    setLoading(true);
    setError(null);
    fetchRef.current(after).then(
      (page) => {
        if (mine !== generation.current) return;
        setItems((previous) => (append ? [...previous, ...page.data] : page.data));
        setCursor(page.next_cursor);
        setHasMore(page.has_more);
        setLoading(false);
      },
      (failure: unknown) => {
        if (mine !== generation.current) return;
        setError(errorMessage(failure));
        setLoading(false);
      },
    );
  }, []);

  useEffect(() => {
    setItems([]);
    run(null, false);
  }, [key, round, run]);

  return {
    items,
    error,
    loading,
    hasMore,
    loadMore: () => run(cursor, true),
    reload: () => setRound((value) => value + 1),
  };
}
