import { useRef, useState, type FormEvent } from 'react';
import { api } from '../api/client.js';
import { ConfirmDialog } from '../components/Dialog.js';
import { Field, NAME_LIMIT, Outcome } from '../components/Field.js';
import { Empty, ErrorNote, LiveStatus, Loading, PageHeader } from '../components/states.js';
import { Clipped, DataTable, type Column } from '../components/ListPage.js';
import { Time } from '../components/Time.js';
import type { List } from '../api/types.js';
import { useLoad } from '../hooks.js';
import { useSession } from '../session.js';
import { ROLE_NAMES } from './settings/roles.js';
import { useAction } from '../use-action.js';
import { MIN_PASSWORD_LENGTH } from './AcceptInvitation.js';
import { BusyButton } from '../components/BusyButton.js';
import { forgetSession } from '../session-memory.js';
import { clientAddressLabel } from '../labels.js';

/** One of the user's own live sessions (GET /account/sessions). */
interface AccountSession {
  id: string;
  object: 'session';
  created_at: string;
  last_seen_at: string;
  device: string;
  ip_address: string | null;
  current: boolean;
}

/** A session as a person reads it: its device, and where from when known. */
const sessionName = (session: AccountSession) =>
  session.ip_address ? `${session.device}, ${clientAddressLabel(session.ip_address).shown}` : session.device;

/**
 * A session's address as the Security log's From says it: "This machine (::1)" for a loopback
 * address, what that means on hover; any other address as it is.
 */
function SessionAddress({ ip }: { ip: string }) {
  const { shown, whole } = clientAddressLabel(ip);
  return shown === whole ? <>{ip}</> : <span title={whole}>{shown}</span>;
}

/**
 * Where one is signed in, as GitHub and Stripe show it: each live session, newest activity
 * first, "This device" for the one in use, and Sign out on each other one (it asks first, as
 * Revoke does). The session in use is ended with Sign out in the account menu, or with Sign out
 * everywhere below the list.
 */
function SessionList({ onAct }: { onAct: () => void }) {
  const sessions = useLoad(
    (signal) => api<List<AccountSession>>('GET', '/account/sessions', { signal }),
    'account-sessions',
  );
  const [ending, setEnding] = useState<AccountSession | null>(null);
  const endOne = useAction();
  const signOutOne = (session: AccountSession) =>
    void endOne.run(
      async () => {
        try {
          await api('POST', `/account/sessions/${session.id}/revoke`);
        } finally {
          // Ended or already gone (a 404): the list says what is live now, either way.
          sessions.set(await api<List<AccountSession>>('GET', '/account/sessions'));
        }
        setEnding(null);
      },
      { done: `${sessionName(session)} signed out: its next request goes to sign in.` },
    );
  const rows = sessions.data?.data ?? [];
  const columns: Column<AccountSession>[] = [
    {
      header: 'Device',
      fill: true,
      cell: (session) => (
        <>
          <Clipped text={session.device} />
          {session.current && (
            <>
              {' '}
              <span className="badge badge-active">This device</span>
            </>
          )}
        </>
      ),
    },
    {
      header: 'IP address',
      cell: (session) => (session.ip_address ? <SessionAddress ip={session.ip_address} /> : '—'),
    },
    { header: 'Signed in', cell: (session) => <Time value={session.created_at} short withTime /> },
    { header: 'Last active', cell: (session) => <Time value={session.last_seen_at} short withTime /> },
    {
      header: 'Actions',
      actions: true,
      // Every row's button is "Sign out": its description says which session, for a screen
      // reader moving from button to button (as the tokens' Revoke).
      cell: (session) =>
        !session.current && (
          <>
            <button
              type="button"
              className="button small danger-outline"
              aria-describedby={`session-${session.id}`}
              onClick={() => {
                onAct();
                endOne.clear();
                setEnding(session);
              }}
            >
              Sign out
            </button>
            <span id={`session-${session.id}`} hidden>
              {sessionName(session)}
            </span>
          </>
        ),
    },
  ];
  return (
    <>
      <LiveStatus>{endOne.done}</LiveStatus>
      {sessions.loading && !sessions.data && <Loading label="Loading sessions…" />}
      {sessions.error && <ErrorNote message={sessions.error} onRetry={sessions.reload} />}
      {sessions.data && rows.length === 0 && <Empty>No open sessions.</Empty>}
      {rows.length > 0 && <DataTable caption="Your sessions" columns={columns} rows={rows} stacks />}
      <p className="muted">Last active can be up to a minute behind.</p>
      {ending && (
        <ConfirmDialog
          title="Sign out this session"
          message={
            <p>{sessionName(ending)} is signed out: its next request goes to sign in. This device stays signed in.</p>
          }
          confirmLabel="Sign out"
          action={endOne}
          onConfirm={() => signOutOne(ending)}
          onClose={() => setEnding(null)}
        />
      )}
    </>
  );
}

export default function Account() {
  const { me, refresh } = useSession();
  const [name, setName] = useState(me.user.name);
  const nameField = useRef<HTMLInputElement>(null);
  const [current, setCurrent] = useState('');
  const [next, setNext] = useState('');
  /**
   * The new password shown as typed, on asking: there is no second field to type it again in,
   * and one mistyped unseen would lock its owner out until someone makes them a reset link.
   */
  const [nextShown, setNextShown] = useState(false);
  const profile = useAction({ fields: ['name'] });
  const password = useAction({ fields: ['current_password', 'new_password'] });
  const everywhere = useAction();
  /** Sign out everywhere ends this session too: it asks first, as Revoke does. */
  const [confirmingSignOut, setConfirmingSignOut] = useState(false);

  // Each form's outcome is its own: acting on one clears what the others last said, so
  // "Name saved." never stands beside a later password refusal as if it were about it. Sign out
  // everywhere's refusal shows in its confirmation only, which forgets it as it closes.
  const saveName = (event: FormEvent) => {
    event.preventDefault();
    // A name over the limit is said at its field already (Field's `limit`): the focus goes there
    // and nothing is sent. The form is `noValidate`, so the browser does not say it a second time
    // in its own bubble; an empty name is the server's to refuse, at the field as well.
    if (nameField.current?.validity.customError) {
      nameField.current.focus();
      return;
    }
    password.clear();
    void profile.run(
      async () => {
        // The name as kept (its spaces tidied: docs/dashboard-api.md), not as typed.
        const saved = await api<{ user: { name: string } }>('PATCH', '/account', { body: { name } });
        setName(saved.user.name);
        refresh();
      },
      { done: 'Name saved.' },
    );
  };
  const changePassword = (event: FormEvent) => {
    event.preventDefault();
    profile.clear();
    void password.run(
      async () => {
        await api('POST', '/account/password', { body: { current_password: current, new_password: next } });
        setCurrent('');
        setNext('');
        setNextShown(false);
      },
      { done: 'Password changed. Your other sessions have ended.' },
    );
  };
  const signOutEverywhere = () =>
    void everywhere.run(
      async () => {
        await api('POST', '/account/sign-out-everywhere');
        forgetSession();
        window.location.assign('/dashboard/sign-in?reason=signed_out_everywhere');
      },
      { done: 'Signed out everywhere.', staysBusy: true },
    );

  return (
    <>
      <PageHeader title="Account" />
      <div className="stack">
        <form className="card stack narrow" onSubmit={saveName} noValidate>
          <h2>Profile</h2>
          <p className="muted">
            {me.user.email} · {ROLE_NAMES[me.user.role]}
          </p>
          <Field
            label="Name"
            inputRef={nameField}
            autoComplete="name"
            required
            limit={NAME_LIMIT}
            value={name}
            action={profile}
            param="name"
            onChange={(event) => setName(event.target.value)}
          />
          <Outcome action={profile} />
          <div>
            <BusyButton type="submit" className="button primary" busy={profile.busy}>
              Save name
            </BusyButton>
          </div>
        </form>
        <form className="card stack narrow" onSubmit={changePassword}>
          <h2>Password</h2>
          <Field
            label="Current password"
            type="password"
            autoComplete="current-password"
            required
            value={current}
            action={password}
            param="current_password"
            onChange={(event) => setCurrent(event.target.value)}
          />
          <Field
            label="New password"
            type={nextShown ? 'text' : 'password'}
            after={
              <button
                type="button"
                className="button small"
                aria-label={`${nextShown ? 'Hide' : 'Show'} password`}
                onClick={() => setNextShown(!nextShown)}
              >
                {nextShown ? 'Hide' : 'Show'}
              </button>
            }
            autoComplete="new-password"
            required
            minLength={MIN_PASSWORD_LENGTH}
            hint={`At least ${MIN_PASSWORD_LENGTH} characters. Your other sessions end.`}
            value={next}
            action={password}
            param="new_password"
            onChange={(event) => setNext(event.target.value)}
          />
          <Outcome action={password} />
          <div>
            <BusyButton type="submit" className="button primary" busy={password.busy}>
              Change password
            </BusyButton>
          </div>
        </form>
        <section className="card stack">
          <h2>Sessions</h2>
          <p className="muted">Where you are signed in. Sign out of any you do not recognize.</p>
          <SessionList
            onAct={() => {
              profile.clear();
              password.clear();
            }}
          />
          <p className="muted">Sign out everywhere ends every session of yours, on every device, this one too.</p>
          <div>
            <BusyButton
              type="button"
              className="button danger-outline"
              onClick={() => {
                profile.clear();
                password.clear();
                setConfirmingSignOut(true);
              }}
              busy={everywhere.busy}
            >
              Sign out everywhere
            </BusyButton>
          </div>
        </section>
      </div>
      {confirmingSignOut && (
        <ConfirmDialog
          title="Sign out everywhere"
          message={<p>Every session of yours ends, on every device, this one too. You then sign in again here.</p>}
          confirmLabel="Sign out everywhere"
          action={everywhere}
          onConfirm={signOutEverywhere}
          onClose={() => setConfirmingSignOut(false)}
        />
      )}
    </>
  );
}
