import type { ReactNode } from 'react';
import type { Loaded } from '../hooks.js';
import { Link } from '../router.js';

export function Loading({ label = 'Loading…' }: { label?: string }) {
  return (
    <p className="state" role="status">
      <span className="spinner" aria-hidden="true" />
      {label}
    </p>
  );
}

/** A server's message, shown as it came (as text: never markup). */
export function ErrorNote({
  message,
  onRetry,
  retryLabel = 'Try again',
}: {
  message: string;
  onRetry?: () => void;
  retryLabel?: string;
}) {
  return (
    <div className="error-note" role="alert">
      <span>{message}</span>
      {onRetry && (
        <button type="button" className="button small" onClick={onRetry}>
          {retryLabel}
        </button>
      )}
    </div>
  );
}

/**
 * Why a page's record is not shown. One that is not there (a 404: another workspace's id, a
 * mistyped or stale address) is said plainly, with the way back to its list: trying again
 * cannot help. Any other failure is the server's message, with Try again.
 */
export function LoadError({
  loaded,
  what,
  back,
}: {
  loaded: Pick<Loaded<unknown>, 'error' | 'notFound' | 'reload'>;
  what: string;
  back: { to: string; label: string };
}) {
  if (!loaded.error) return null;
  if (!loaded.notFound) return <ErrorNote message={loaded.error} onRetry={loaded.reload} />;
  return (
    <p className="state empty">
      There is no such {what} in this workspace. <Link to={back.to}>{back.label}</Link>
    </p>
  );
}

/**
 * The page for an address the app has no page at (an unknown path, an unknown Settings section):
 * its h1 names it, and so the tab's title ("Page not found · …"); the focus goes to that h1 as on
 * any page (route-focus.ts), and a link under it leads on to the Overview, the app's first page:
 * it had no way on but the navigation, which a phone keeps behind its menu button.
 */
export function NotFound() {
  return (
    <div className="card">
      <h1>Page not found</h1>
      <p>There is no page at this address.</p>
      <p>
        <Link to="/">Go to the Overview</Link>
      </p>
    </div>
  );
}

/**
 * A status message ("Name saved.", "Saved.", a test delivery's outcome) in a live region
 * (`role="status"`) that is on the page, empty and unseen, before it has anything to say, then
 * filled: screen readers announce a change in a region they already know of, and not reliably a
 * region that arrives holding its text, as each of these did.
 */
export function LiveStatus({ children, className = 'result ok' }: { children: ReactNode; className?: string }) {
  const saying = children !== null && children !== undefined && children !== false && children !== '';
  return (
    <div role="status" className={saying ? className : 'visually-hidden'}>
      {saying ? children : null}
    </div>
  );
}

export function Empty({ children }: { children: ReactNode }) {
  return <p className="state empty">{children}</p>;
}

/**
 * A long id in a heading (an invoice id): kept whole on its own line when it
 * fits, smaller on phones so that it does, and broken anywhere only when it still cannot. The
 * heading broke anywhere before, leaving the id's last letter alone on a line at 390 px.
 */
export function HeadingId({ children }: { children: string }) {
  return <span className="heading-id">{children}</span>;
}

export function PageHeader({ title, children }: { title: ReactNode; children?: ReactNode }) {
  return (
    <header className="page-header">
      <h1>{title}</h1>
      {children && <div className="page-actions">{children}</div>}
    </header>
  );
}
