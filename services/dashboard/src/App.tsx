import { useCallback, useEffect, useState, type ReactElement } from 'react';
import { api, setForbiddenHandler, setSessionEndedHandler } from './api/client.js';
import type { Me } from './api/types.js';
import { ErrorNote, Loading, NotFound } from './components/states.js';
import { Shell } from './components/Shell.js';
import { currentPath, navigate, pathOnly, signInDestination, usePath } from './router.js';
import { SessionContext } from './session.js';
import { useTitleFromHeading } from './page-title.js';
import { useFocusOnPageChange } from './route-focus.js';
import { lazyPage, type LazyPage } from './lazy-page.js';
import { forgetSession, hadSession, rememberSession } from './session-memory.js';

const SignIn = lazyPage(() => import('./pages/SignIn.js'));
const AcceptInvitation = lazyPage(() => import('./pages/AcceptInvitation.js'));
const ForgotPassword = lazyPage(() => import('./pages/ForgotPassword.js'));
const ResetPassword = lazyPage(() => import('./pages/ResetPassword.js'));
const Overview = lazyPage(() => import('./pages/Overview.js'));
const Campaigns = lazyPage(() => import('./pages/Campaigns.js'));
const Customers = lazyPage(() => import('./pages/Customers.js'));
const CancelSessions = lazyPage(() => import('./pages/CancelSessions.js'));
const CampaignDetail = lazyPage(() => import('./pages/CampaignDetail.js'));
const CustomerDetail = lazyPage(() => import('./pages/CustomerDetail.js'));
const CancelSessionDetail = lazyPage(() => import('./pages/CancelSessionDetail.js'));
const Account = lazyPage(() => import('./pages/Account.js'));
const Settings = lazyPage(() => import('./pages/settings/Settings.js'));

/** Pages that need no session. */
function anonymousPage(path: string) {
  if (path === '/sign-in') return <SignIn />;
  if (path === '/forgot-password') return <ForgotPassword />;
  const invite = /^\/invite\/([^/]+)$/.exec(path);
  if (invite) return <AcceptInvitation token={invite[1]!} />;
  const reset = /^\/reset\/([^/]+)$/.exec(path);
  if (reset) return <ResetPassword token={reset[1]!} />;
  return null;
}

function signedInPage(path: string) {
  if (path === '/') return <Overview />;
  if (path === '/campaigns') return <Campaigns />;
  if (path === '/customers') return <Customers />;
  if (path === '/cancel-sessions') return <CancelSessions />;
  const detail = /^\/(campaigns|customers|cancel-sessions)\/([^/]+)$/.exec(path);
  if (detail) {
    const id = decodeURIComponent(detail[2]!);
    if (detail[1] === 'campaigns') return <CampaignDetail key={id} id={id} />;
    if (detail[1] === 'customers') return <CustomerDetail key={id} id={id} />;
    return <CancelSessionDetail key={id} id={id} />;
  }
  if (path === '/account') return <Account />;
  if (path === '/settings' || path.startsWith('/settings/')) return <Settings path={path} />;
  return <NotFound />;
}

/**
 * Starts loading the code of the page at this address, beside the app's first request (GET /me)
 * rather than after it: a signed-in page is rendered only once the session is known.
 */
function preloadCodeOf(page: ReactElement | null): void {
  void (page?.type as Partial<LazyPage<object>> | undefined)?.preload?.();
}

/**
 * Sends the viewer to sign in, remembering where they were. `ended`: a session this tab was using
 * ended under it (a 401 on a signed-in page), which the sign-in page then says (SIGN_IN_REASONS),
 * and why when the server said (`code`: `member_removed`, removed from the team).
 */
function goToSignIn(ended = false, code: string | null = null): void {
  const here = currentPath();
  const next = pathOnly(here) === '/sign-in' ? '/' : here;
  const reason = code === 'member_removed' ? 'removed' : 'session_ended';
  const query = new URLSearchParams({ ...(next !== '/' && { next }), ...(ended && { reason }) });
  const text = query.toString();
  navigate(`/sign-in${text ? `?${text}` : ''}`, { replace: true });
}

/** What every tab's title ends with (index.html's title before the app starts). */
const PRODUCT_TITLE = 'Retention dashboard';

export function App() {
  const path = usePath();
  const route = pathOnly(path);
  const anonymous = anonymousPage(route);
  const [me, setMe] = useState<Me | null | undefined>(undefined);
  const [error, setError] = useState<string | null>(null);
  useTitleFromHeading(!anonymous && me ? `${me.workspace.name} · ${PRODUCT_TITLE}` : PRODUCT_TITLE);
  useFocusOnPageChange(route);

  const loadMe = useCallback(() => {
    api<Me>('GET', '/me', { anonymous: true }).then(
      (value) => {
        rememberSession();
        setMe(value);
        setError(null);
      },
      (failure: { status?: number; message: string; code?: string | null }) => {
        if (failure.status !== 401) return setError(failure.message);
        // A session this browser had, ended elsewhere since: said, as for a page open then.
        if (hadSession()) {
          forgetSession();
          goToSignIn(true, failure.code ?? null);
        }
        setMe(null);
      },
    );
  }, []);

  useEffect(() => {
    const page = anonymousPage(route);
    preloadCodeOf(page ?? signedInPage(route));
    // While someone signs in (or sets a password), the page it leads to comes into the browser's
    // cache, so the fresh load after it does not wait for it (Overview's is the largest chunk).
    if (page) preloadCodeOf(signedInPage(pathOnly(signInDestination())));
  }, [route]);

  useEffect(() => {
    setSessionEndedHandler((code) => {
      forgetSession();
      setMe(null);
      goToSignIn(true, code);
    });
    // A refusal for the role: the role is asked again, and taken only when it changed, so a
    // page that asks for what the role cannot do does not load itself again and again.
    setForbiddenHandler(() => {
      api<Me>('GET', '/me', { anonymous: true }).then(
        (value) =>
          setMe((previous) =>
            previous &&
            JSON.stringify(previous.permissions) === JSON.stringify(value.permissions) &&
            previous.user.role === value.user.role
              ? previous
              : value,
          ),
        // Signed out meanwhile, or a failure: the next request says so as usual.
        () => undefined,
      );
    });
  }, []);

  useEffect(() => {
    if (!anonymous && me === undefined) loadMe();
  }, [anonymous, me, loadMe]);

  useEffect(() => {
    if (!anonymous && me === null) goToSignIn();
  }, [anonymous, me]);

  if (anonymous) {
    return (
      <main className="auth-page">
        <SessionContext.Provider value={null}>{anonymous}</SessionContext.Provider>
      </main>
    );
  }
  if (error) {
    return (
      <main className="auth-page">
        <ErrorNote message={error} onRetry={loadMe} />
      </main>
    );
  }
  if (!me) {
    return (
      <main className="auth-page">
        <Loading />
      </main>
    );
  }
  return (
    <SessionContext.Provider value={{ me, refresh: loadMe }}>
      <Shell>{signedInPage(route)}</Shell>
    </SessionContext.Provider>
  );
}
