import { useState, type FormEvent } from 'react';
import { api } from '../api/client.js';
import type { Me, Role, SignedIn } from '../api/types.js';
import { ROLE_NAMES } from '../labels.js';
import { AuthCard } from '../components/AuthCard.js';
import { Field, FormError, NAME_LIMIT } from '../components/Field.js';
import { ErrorNote, Loading } from '../components/states.js';
import { useLoad } from '../hooks.js';
import { afterSignIn, Link } from '../router.js';
import { useAction } from '../use-action.js';
import { BusyButton } from '../components/BusyButton.js';

interface InvitationView {
  email: string;
  role: Role;
  workspace_name: string;
  expires_at: string;
}

export const MIN_PASSWORD_LENGTH = 10;

export default function AcceptInvitation({ token }: { token: string }) {
  const invitation = useLoad(
    (signal) => api<InvitationView>('GET', `/invitations/${encodeURIComponent(token)}`, { anonymous: true, signal }),
    token,
  );
  /**
   * Who this browser is signed in as, if anyone: accepting signs it in as the invited person
   * instead (and ends that session), which the page says before the form, not after.
   */
  const me = useLoad((signal) => api<Me>('GET', '/me', { anonymous: true, signal }), 'me');
  const signedInAs = me.data?.user ?? null;
  const [name, setName] = useState('');
  const [password, setPassword] = useState('');
  /**
   * A refusal of the name or the password shows at that field; any other (already a member) under
   * them.
   */
  const accept = useAction({ fields: ['name', 'password'] });

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    await accept.run(
      async () => {
        await api<SignedIn>('POST', `/invitations/${encodeURIComponent(token)}/accept`, {
          body: { name, password },
          anonymous: true,
        });
        afterSignIn();
      },
      { staysBusy: true },
    );
  };

  if (invitation.loading) return <Loading />;
  if (invitation.error || !invitation.data) {
    return (
      <AuthCard title="This invitation cannot be used">
        <ErrorNote message={invitation.error ?? 'Unknown invitation.'} />
        <p className="muted">Ask whoever invited you for a new link.</p>
        <Link to="/sign-in" className="subtle-link">
          Go to sign in
        </Link>
      </AuthCard>
    );
  }
  const data = invitation.data;
  return (
    <AuthCard
      title={`Join ${data.workspace_name}`}
      intro={
        <>
          You were invited as <strong>{ROLE_NAMES[data.role]}</strong> with {data.email}. Choose your name and a
          password.
        </>
      }
    >
      {signedInAs && (
        <p className="notice" role="note" aria-label="Signed in as someone else" id="signed-in-as">
          This browser is signed in as <strong>{signedInAs.name || signedInAs.email}</strong>
          {signedInAs.name && ` (${signedInAs.email})`}. Accepting signs {signedInAs.name || signedInAs.email} out here
          and signs this browser in as {data.email} instead.
        </p>
      )}
      <form className="stack" onSubmit={(event) => void submit(event)}>
        {/* Its first field has the focus, as the sign-in's does: the page is opened from an email
            to fill in this form, and nothing else on it takes input. route-focus leaves the focus
            where a page put it, so the heading's rule does not undo this. */}
        <Field
          label="Name"
          autoComplete="name"
          autoFocus
          required
          limit={NAME_LIMIT}
          value={name}
          action={accept}
          param="name"
          onChange={(event) => setName(event.target.value)}
        />
        <Field
          label="Password"
          type="password"
          autoComplete="new-password"
          required
          minLength={MIN_PASSWORD_LENGTH}
          hint={`At least ${MIN_PASSWORD_LENGTH} characters.`}
          value={password}
          action={accept}
          param="password"
          onChange={(event) => setPassword(event.target.value)}
        />
        <FormError action={accept} />
        <BusyButton
          type="submit"
          className="button primary block"
          busy={accept.busy}
          aria-describedby={signedInAs ? 'signed-in-as' : undefined}
        >
          Accept invitation
        </BusyButton>
      </form>
    </AuthCard>
  );
}
