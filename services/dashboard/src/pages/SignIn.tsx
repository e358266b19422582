import { useState, type FormEvent } from 'react';
import { AuthCard } from '../components/AuthCard.js';
import { FormError } from '../components/Field.js';
import { SignInFields } from '../components/SignInFields.js';
import { afterSignIn, Link } from '../router.js';
import { useSignInForm } from '../use-sign-in-form.js';
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
  const [reason, setReason] = useState(
    () => SIGN_IN_REASONS[new URLSearchParams(window.location.search).get('reason') ?? ''],
  );
  const form = useSignInForm('', afterSignIn);
  /**
   * The reason said why the person came here; once they submit, what they see is the outcome of
   * that submit alone (a refusal under the form), not "You are signed out…" above it. The address
   * bar forgets `reason` too, so a reload does not bring it back.
   */
  const submit = (event: FormEvent) => {
    if (reason) {
      setReason(undefined);
      const url = new URL(window.location.href);
      url.searchParams.delete('reason');
      window.history.replaceState(window.history.state, '', url);
    }
    void form.submit(event);
  };
  return (
    <AuthCard title="Sign in to your workspace">
      {reason && (
        <p role="status" className="notice">
          {reason}
        </p>
      )}
      <form className="stack" onSubmit={submit}>
        <SignInFields form={form} emailFocus={{ autoFocus: true }} />
        <FormError action={form.action} />
        <BusyButton type="submit" className="button primary block" busy={form.action.busy}>
          Sign in
        </BusyButton>
        <Link to="/forgot-password" className="subtle-link">
          Forgot your password?
        </Link>
      </form>
    </AuthCard>
  );
}
