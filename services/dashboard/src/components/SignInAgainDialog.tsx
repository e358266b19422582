import type { SignedIn } from '../api/types.js';
import { useSignInForm } from '../use-sign-in-form.js';
import { BusyButton } from './BusyButton.js';
import { Dialog } from './Dialog.js';
import { FormError } from './Field.js';
import { SignInFields } from './SignInFields.js';

/**
 * Asks for the password in place when the session ended under a signed-in page (signed out in
 * another tab or everywhere, expired), so the page and what was typed in it stay (App decides
 * what follows a sign-in: session-switch.ts). The Email is the one the page was signed in with,
 * and can be changed: someone else may sign in here, and then gets a fresh page. The focus
 * starts at the Password, where typing begins, and goes back where it was on closing (Dialog).
 * The password lives in this dialog's state only and goes with it.
 */
export function SignInAgainDialog({
  email: signedInEmail,
  onSignedIn,
  onClose,
}: {
  /** Whose session ended: the page's person. */
  email: string;
  /** Signed in, as the answer says who: App goes on or starts afresh. */
  onSignedIn: (signedIn: SignedIn) => void;
  /** Closed without signing in: the page stays, signed out, and its requests fail with their 401. */
  onClose: () => void;
}) {
  const form = useSignInForm(signedInEmail, onSignedIn);

  return (
    <Dialog title="Your session ended" onClose={onClose}>
      <form className="stack" onSubmit={(event) => void form.submit(event)}>
        <div className="stack tight">
          <p>Sign in again to continue. This page stays as it is, with what you typed in it.</p>
          <p className="muted">Someone else signing in here starts afresh, without it.</p>
        </div>
        <SignInFields form={form} passwordFocus={{ 'data-autofocus': true }} />
        <FormError action={form.action} />
        <div className="dialog-actions">
          <BusyButton type="submit" className="button primary" busy={form.action.busy}>
            Sign in
          </BusyButton>
        </div>
      </form>
    </Dialog>
  );
}
