import { useEffect, useReducer, type ComponentType } from 'react';
import { ErrorNote, Loading } from './components/states.js';

/**
 * A page whose code is its own chunk, loaded when first needed, without React's `lazy` and
 * `<Suspense>`. React 19 holds back the content of a Suspense boundary until 300 ms after its
 * fallback appeared (its "fallback throttle"), so a page whose chunk arrived in 20 ms was shown,
 * and only then asked for its data, 300 ms later: the first visit to every page waited that long
 * for nothing (docs/dashboard-ui.md, "Loading a page's code"). This shows the spinner until the chunk
 * is in and the page at once after it.
 *
 * A chunk that cannot be loaded (the network, or a deploy that replaced the build since the tab
 * opened: its old files are gone) is said in words, with a reload, where `lazy` threw and left a
 * blank window.
 */
export interface LazyPage<P extends object> {
  (props: P): React.JSX.Element;
  /** Starts loading the page's code, if it has not started; many calls load it once. */
  preload(): Promise<void>;
}

type Module<P> = { default: ComponentType<P> };

export function lazyPage<P extends object>(load: () => Promise<Module<P>>): LazyPage<P> {
  let Page: ComponentType<P> | null = null;
  let failed = false;
  let loading: Promise<void> | null = null;

  const preload = (): Promise<void> => {
    loading ??= load().then(
      (module) => {
        Page = module.default;
      },
      () => {
        failed = true;
        loading = null;
      },
    );
    return loading;
  };

  function LazyPageLoader(props: P) {
    const [, loaded] = useReducer((count: number) => count + 1, 0);
    // Not `Page` when the effect runs: the code may have come in between this render and its
    // effect (its load started beside GET /me), and the page must render again then too.
    const rendered = Page !== null;
    useEffect(() => {
      if (!rendered) void preload().then(loaded);
    }, [rendered]);
    if (Page) return <Page {...props} />;
    if (failed) {
      return (
        <ErrorNote
          message="This page could not be loaded: the connection failed, or the dashboard was updated since this tab opened."
          retryLabel="Reload"
          onRetry={() => window.location.reload()}
        />
      );
    }
    return <Loading />;
  }
  return Object.assign(LazyPageLoader, { preload });
}
