import { useState, type FormEvent } from 'react';
import { api } from '../api/client.js';
import type { SignedIn } from '../api/types.js';
import { AuthCard } from '../components/AuthCard.js';
import { Field, FormError } from '../components/Field.js';
import { ErrorNote, Loading } from '../components/states.js';
import { useLoad } from '../hooks.js';
import { afterSignIn, Link } from '../router.js';
import { useAction } from '../use-action.js';
import { MIN_PASSWORD_LENGTH } from './AcceptInvitation.js';
import { BusyButton } from '../components/BusyButton.js';

export default function ResetPassword({ token }: { token: string }) {
  const link = useLoad(
    (signal) =>
      api<{ email: string; expires_at: string }>('GET', `/password-reset/${encodeURIComponent(token)}`, {
        anonymous: true,
        signal,
      }),
    token,
  );
  const [password, setPassword] = useState('');
  /** A refusal of the password (over 256 characters) shows at the field; any other (a spent link) under it. */
  const reset = useAction({ fields: ['password'] });

  const submit = (event: FormEvent) => {
    event.preventDefault();
    void reset.run(
      async () => {
        await api<SignedIn>('POST', `/password-reset/${encodeURIComponent(token)}`, {
          body: { password },
          anonymous: true,
        });
        afterSignIn();
      },
      { staysBusy: true },
    );
  };

  if (link.loading) return <Loading />;
  if (link.error || !link.data) {
    return (
      <AuthCard title="This link cannot be used">
        <ErrorNote message={link.error ?? 'Unknown link.'} />
        <Link to="/forgot-password" className="subtle-link">
          Ask for a new link
        </Link>
      </AuthCard>
    );
  }
  return (
    <AuthCard title="Set a new password" intro={`For ${link.data.email}. Every other session of yours will end.`}>
      <form className="stack" onSubmit={submit}>
        {/* Focused as the sign-in's first field is, and the invitation's: the page is opened from a
            link for this one field. route-focus leaves a focus the page put there alone. */}
        <Field
          label="New password"
          type="password"
          autoComplete="new-password"
          autoFocus
          required
          minLength={MIN_PASSWORD_LENGTH}
          hint={`At least ${MIN_PASSWORD_LENGTH} characters.`}
          value={password}
          action={reset}
          param="password"
          onChange={(event) => setPassword(event.target.value)}
        />
        <FormError action={reset} />
        <BusyButton type="submit" className="button primary block" busy={reset.busy}>
          Set password and sign in
        </BusyButton>
      </form>
    </AuthCard>
  );
}
