import { useRef, useState, type FormEvent } from 'react';
import { api } from '../api/client.js';
import { ConfirmDialog } from '../components/Dialog.js';
import { Field, NAME_LIMIT, Outcome } from '../components/Field.js';
import { PageHeader } from '../components/states.js';
import { useSession } from '../session.js';
import { ROLE_NAMES } from './settings/roles.js';
import { useAction } from '../use-action.js';
import { MIN_PASSWORD_LENGTH } from './AcceptInvitation.js';
import { BusyButton } from '../components/BusyButton.js';
import { forgetSession } from '../session-memory.js';

export default function Account() {
  const { me, refresh } = useSession();
  const [name, setName] = useState(me.user.name);
  const nameField = useRef<HTMLInputElement>(null);
  const [current, setCurrent] = useState('');
  const [next, setNext] = useState('');
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
            type="password"
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
        <section className="card stack narrow">
          <h2>Sessions</h2>
          <p className="muted">Ends every session of yours, on every device, this one too.</p>
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
