import { useRef, useState, type FormEvent } from 'react';
import { api, ApiError } from '../api/client.js';
import type { SignedIn } from '../api/types.js';
import { AuthCard } from '../components/AuthCard.js';
import { Field, FormError } from '../components/Field.js';
import { afterSignIn, Link } from '../router.js';
import { useAction } from '../use-action.js';
import { BusyButton } from '../components/BusyButton.js';

/**
 * Why the viewer is at the sign-in page, when they did not come to sign in (`?reason=`): a session
 * that ended under a page, or Sign out everywhere. Any other value says nothing.
 */
const SIGN_IN_REASONS: Readonly<Record<string, string>> = {
  session_ended:
    'Your session ended: it expired, or you were signed out, on another device or by a password change. Sign in again to go on.',
  signed_out_everywhere: 'You are signed out on every device, this one included.',
  removed:
    'You were removed from this workspace, so your session ended. To come back, ask one of its owners or admins to invite you again.',
};

export default function SignIn() {
  const [reason] = useState(() => SIGN_IN_REASONS[new URLSearchParams(window.location.search).get('reason') ?? '']);
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
      {reason && (
        <p role="status" className="notice">
          {reason}
        </p>
      )}
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
