import { useCallback, useEffect, useRef, useState, type ReactElement } from 'react';
import { api, setForbiddenHandler, setSessionEndedHandler } from './api/client.js';
import type { Me, SignedIn } from './api/types.js';
import { ErrorNote, Loading, NotFound } from './components/states.js';
import { Shell } from './components/Shell.js';
import { currentPath, navigate, pathOnly, signInDestination, usePath } from './router.js';
import { SessionContext } from './session.js';
import { useTitleFromHeading } from './page-title.js';
import { useFocusOnPageChange } from './route-focus.js';
import { lazyPage, type LazyPage } from './lazy-page.js';
import { forgetSession, hadSession, rememberSession } from './session-memory.js';
import { closedWithoutSigningIn, signedInAgain, useSignInAgainAsked, waitForSignInAgain } from './session-resume.js';
import { samePerson, startAfresh } from './session-switch.js';
import { announceSignedIn, onSignedInElsewhere } from './session-broadcast.js';
import { SignInAgainDialog } from './components/SignInAgainDialog.js';
import { RoleChangedNote, type RoleChange } from './components/RoleChangedNote.js';
import { PageErrorBoundary } from './components/PageErrorBoundary.js';

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
  // A malformed escape (`/customers/%`) is an address no page has, not a blank app.
  const id = detail ? decodedSegment(detail[2]!) : null;
  if (detail && id !== null) {
    if (detail[1] === 'campaigns') return <CampaignDetail key={id} id={id} />;
    if (detail[1] === 'customers') return <CustomerDetail key={id} id={id} />;
    return <CancelSessionDetail key={id} id={id} />;
  }
  if (path === '/account') return <Account />;
  if (path === '/settings' || path.startsWith('/settings/')) return <Settings path={path} />;
  return <NotFound />;
}

/** A path segment as it reads unescaped; null when its percent-escapes are malformed. */
function decodedSegment(segment: string): string | null {
  try {
    return decodeURIComponent(segment);
  } catch {
    return null;
  }
}

/**
 * Starts loading the code of the page at this address, beside the app's first request (GET /me)
 * rather than after it: a signed-in page is rendered only once the session is known.
 */
function preloadCodeOf(page: ReactElement | null): void {
  void (page?.type as Partial<LazyPage<object>> | undefined)?.preload?.();
}

/**
 * Sends the viewer to sign in, remembering where they were. `ended`: a session this browser had
 * ended (found by the first GET /me of a page load; on a page open then, only a removal from the
 * team comes here, the rest is signed in again in place), which the sign-in page then says
 * (SIGN_IN_REASONS), and why when the server said (`code`: `member_removed`, removed from the team).
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
  /** The role changed under the page (read again): said above the page until dismissed. */
  const [roleChange, setRoleChange] = useState<RoleChange | null>(null);
  /** The page's person, for the handlers set once below. */
  const shownMe = useRef(me);
  shownMe.current = me;
  const signInAgainAsked = useSignInAgainAsked();
  useTitleFromHeading(!anonymous && me ? `${me.workspace.name} · ${PRODUCT_TITLE}` : PRODUCT_TITLE);
  useFocusOnPageChange(route);

  const loadMe = useCallback(() => {
    // Read again under a page shown (after a change, or signing in again), a 401 is a session
    // that ended under the page, signed in again in place as any other request's; only a page's
    // first read is answered 401 by being signed out.
    api<Me>('GET', '/me', { anonymous: !shownMe.current }).then(
      (value) => {
        // Someone else is signed in now (another tab signed in under this one): a fresh page,
        // never this person's page with that one's session.
        if (shownMe.current && !samePerson(shownMe.current, value)) return startAfresh();
        rememberSession();
        announceSignedIn(value.user.id);
        setMe(value);
        setError(null);
      },
      (failure: { status?: number; message: string; code?: string | null }) => {
        if (failure.status !== 401) return setError(failure.message);
        // Under a page shown, the 401 went to the session-ended handler: signed in again was asked
        // again, so this is the dialog closed without it (the page stays, signed out), or a
        // removal (gone to the sign-in page already).
        if (shownMe.current) return;
        // A session this browser had, ended elsewhere since: said, as for a page open then.
        if (hadSession()) {
          forgetSession();
          goToSignIn(true, failure.code ?? null);
        }
        setMe(null);
      },
    );
  }, []);

  /** A role read again is on its way: the focus and visibility events of one return ask once. */
  const rereading = useRef(false);
  /**
   * Reads GET /me again to see whether the role changed under the page: after a 403 `forbidden`
   * (`refused`) and when the tab is returned to. It is taken only when the role or the
   * permissions changed, so a page that asks for what the role cannot do does not load itself
   * again and again; a new role is then said (RoleChangedNote), as not done when a refusal found it.
   */
  const readRoleAgain = useCallback((refused: boolean) => {
    if (!shownMe.current || rereading.current) return;
    rereading.current = true;
    api<Me>('GET', '/me', { anonymous: true })
      .then(
        (value) => {
          const previous = shownMe.current;
          if (!previous) return;
          if (!samePerson(previous, value)) return startAfresh();
          const sameRole =
            previous.user.role === value.user.role &&
            JSON.stringify(previous.permissions) === JSON.stringify(value.permissions);
          if (sameRole) return;
          shownMe.current = value;
          setMe(value);
          if (previous.user.role !== value.user.role) {
            setRoleChange({ from: previous.user.role, to: value.user.role, refused });
          }
        },
        // Signed out meanwhile, or a failure: the next request says so as usual.
        () => undefined,
      )
      .finally(() => (rereading.current = false));
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
      // Removed from the team: they cannot sign in to this workspace again, so the sign-in page
      // says why, as before; what the page held is of no use to them now.
      if (code === 'member_removed') {
        forgetSession();
        setMe(null);
        goToSignIn(true, code);
        return Promise.resolve(false);
      }
      // Any other ended session is signed in again in place (SignInAgainDialog), the page kept.
      return waitForSignInAgain();
    });
    // Another tab found who is signed in: someone else is a fresh page here; the same person,
    // signed in again there, ends this tab's wait (its cookie works again) and this tab reads
    // its session again (the role may have changed meanwhile).
    const stopListening = onSignedInElsewhere((userId) => {
      const shown = shownMe.current;
      if (!shown) return;
      if (shown.user.id !== userId) startAfresh();
      else if (signedInAgain()) loadMe();
    });
    // A refusal for the role: the role is asked again, and the page says why its controls changed.
    setForbiddenHandler(() => readRoleAgain(true));
    return stopListening;
  }, [loadMe, readRoleAgain]);

  // Back to this tab (its window focused, or the tab shown again): the role is read again, so a
  // promotion or a demotion made meanwhile (by an owner, in another browser) shows here without a
  // reload, before the person clicks something their role no longer allows.
  useEffect(() => {
    const onReturn = () => {
      if (document.visibilityState === 'visible') readRoleAgain(false);
    };
    window.addEventListener('focus', onReturn);
    document.addEventListener('visibilitychange', onReturn);
    return () => {
      window.removeEventListener('focus', onReturn);
      document.removeEventListener('visibilitychange', onReturn);
    };
  }, [readRoleAgain]);

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
  // The same person: the page goes on, and the requests that waited are asked again; its
  // session is read again beside them (the role may have changed while signed out).
  const onSignedInAgain = (signedIn: SignedIn) => {
    if (!samePerson(me, signedIn)) return startAfresh();
    signedInAgain();
    loadMe();
  };
  return (
    <SessionContext.Provider value={{ me, refresh: loadMe }}>
      <Shell>
        {roleChange && <RoleChangedNote change={roleChange} onDismiss={() => setRoleChange(null)} />}
        <PageErrorBoundary resetKey={path}>{signedInPage(route)}</PageErrorBoundary>
      </Shell>
      {signInAgainAsked && (
        <SignInAgainDialog email={me.user.email} onSignedIn={onSignedInAgain} onClose={closedWithoutSigningIn} />
      )}
    </SessionContext.Provider>
  );
}
