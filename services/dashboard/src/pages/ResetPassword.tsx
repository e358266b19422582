import { useState, type FormEvent } from 'react';
import { api, errorMessage } from '../api/client.js';
import type { SignedIn } from '../api/types.js';
import { AuthCard } from '../components/AuthCard.js';
import { Field } from '../components/Field.js';
import { ErrorNote, Loading } from '../components/states.js';
import { useLoad } from '../hooks.js';
import { afterSignIn, Link } from '../router.js';
import { MIN_PASSWORD_LENGTH } from './AcceptInvitation.js';

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
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await api<SignedIn>('POST', `/password-reset/${encodeURIComponent(token)}`, {
        body: { password },
        anonymous: true,
      });
      afterSignIn();
    } catch (failure) {
      setError(errorMessage(failure));
      setBusy(false);
    }
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
      <form className="stack" onSubmit={(event) => void submit(event)}>
        <Field
          label="New password"
          type="password"
          autoComplete="new-password"
          required
          minLength={MIN_PASSWORD_LENGTH}
          hint={`At least ${MIN_PASSWORD_LENGTH} characters.`}
          value={password}
          onChange={(event) => setPassword(event.target.value)}
        />
        {error && <ErrorNote message={error} />}
        <button type="submit" className="button primary block" disabled={busy}>
          Set password and sign in
        </button>
      </form>
    </AuthCard>
  );
}
