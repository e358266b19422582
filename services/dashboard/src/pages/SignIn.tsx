import { useRef, useState, type FormEvent } from 'react';
import { api, ApiError } from '../api/client.js';
import type { SignedIn } from '../api/types.js';
import { AuthCard } from '../components/AuthCard.js';
import { Field, FormError } from '../components/Field.js';
import { afterSignIn, Link } from '../router.js';
import { useAction } from '../use-action.js';
import { BusyButton } from '../components/BusyButton.js';

export default function SignIn() {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const signIn = useAction({ fields: ['email', 'password'] });
  const emailInput = useRef<HTMLInputElement>(null);
  const passwordInput = useRef<HTMLInputElement>(null);

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    let refusedAddress = false;
    const signedIn = await signIn.run(
      async () => {
        try {
          await api<SignedIn>('POST', '/session', { body: { email, password }, anonymous: true });
        } catch (failure) {
          refusedAddress = failure instanceof ApiError && failure.param === 'email';
          throw failure;
        }
        afterSignIn();
      },
      { staysBusy: true },
    );
    if (signedIn) return;
    // An address the server cannot take is corrected where it is, the password kept. Any other
    // refusal: the password is typed again (the address usually is right), from an empty field.
    if (refusedAddress) {
      emailInput.current?.focus();
    } else {
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
          inputRef={emailInput}
          value={email}
          action={signIn}
          param="email"
          onChange={(event) => setEmail(event.target.value)}
        />
        <Field
          label="Password"
          type="password"
          autoComplete="current-password"
          inputRef={passwordInput}
          required
          value={password}
          action={signIn}
          param="password"
          onChange={(event) => setPassword(event.target.value)}
        />
        <FormError action={signIn} />
        <BusyButton type="submit" className="button primary block" busy={signIn.busy}>
          Sign in
        </BusyButton>
        <Link to="/forgot-password" className="subtle-link">
          Forgot your password?
        </Link>
      </form>
    </AuthCard>
  );
}
