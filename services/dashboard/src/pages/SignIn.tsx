import { useRef, useState, type FormEvent } from 'react';
import { api } from '../api/client.js';
import type { SignedIn } from '../api/types.js';
import { AuthCard } from '../components/AuthCard.js';
import { Field } from '../components/Field.js';
import { ErrorNote } from '../components/states.js';
import { afterSignIn, Link } from '../router.js';
import { useAction } from '../use-action.js';

export default function SignIn() {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const signIn = useAction();
  const passwordInput = useRef<HTMLInputElement>(null);

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    const signedIn = await signIn.run(
      async () => {
        await api<SignedIn>('POST', '/session', { body: { email, password }, anonymous: true });
        afterSignIn();
      },
      { staysBusy: true },
    );
    // Refused: the password is typed again (the address usually is right), from an empty field.
    if (!signedIn) {
      setPassword('');
      passwordInput.current?.focus();
    }
  };

  return (
    <AuthCard title="Sign in to your workspace">
      <form className="stack" onSubmit={(event) => void submit(event)}>
        <Field
          label="Email"
          type="email"
          autoComplete="username"
          autoFocus
          required
          value={email}
          onChange={(event) => setEmail(event.target.value)}
        />
        <Field
          label="Password"
          type="password"
          autoComplete="current-password"
          inputRef={passwordInput}
          required
          value={password}
          onChange={(event) => setPassword(event.target.value)}
        />
        {signIn.error && <ErrorNote message={signIn.error} />}
        <button type="submit" className="button primary block" disabled={signIn.busy}>
          Sign in
        </button>
        <Link to="/forgot-password" className="subtle-link">
          Forgot your password?
        </Link>
      </form>
    </AuthCard>
  );
}
