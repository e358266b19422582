import { useState, type FormEvent } from 'react';
import { api, errorMessage } from '../api/client.js';
import type { SignedIn } from '../api/types.js';
import { AuthCard } from '../components/AuthCard.js';
import { Field } from '../components/Field.js';
import { ErrorNote } from '../components/states.js';
import { afterSignIn, Link } from '../router.js';

export default function SignIn() {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await api<SignedIn>('POST', '/session', { body: { email, password }, anonymous: true });
      afterSignIn();
    } catch (failure) {
      setError(errorMessage(failure));
      setBusy(false);
    }
  };

  return (
    <AuthCard title="Sign in to your workspace">
      <form className="stack" onSubmit={(event) => void submit(event)}>
        <Field
          label="Email"
          type="email"
          autoComplete="username"
          required
          value={email}
          onChange={(event) => setEmail(event.target.value)}
        />
        <Field
          label="Password"
          type="password"
          autoComplete="current-password"
          required
          value={password}
          onChange={(event) => setPassword(event.target.value)}
        />
        {error && <ErrorNote message={error} />}
        <button type="submit" className="button primary block" disabled={busy}>
          Sign in
        </button>
        <Link to="/forgot-password" className="subtle-link">
          Forgot your password?
        </Link>
      </form>
    </AuthCard>
  );
}
