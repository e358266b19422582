import { useRef, useState, type FormEvent } from 'react';
import { api, ApiError } from './api/client.js';
import type { SignedIn } from './api/types.js';
import { useAction } from './use-action.js';

/**
 * A sign-in form's state and its submit, shared by the sign-in page and the dialog that signs in
 * again under a page (SignInAgainDialog): POST /session with the address and password, then
 * `onSignedIn` with the answer, the form staying busy meanwhile (the page goes on or reloads at
 * once: no second submit). On a refusal, an address the server cannot take is corrected where
 * it is, the password kept; any other refusal asks for the password again (the address usually
 * is right), from an empty field.
 */
export function useSignInForm(initialEmail: string, onSignedIn: (signedIn: SignedIn) => void) {
  const [email, setEmail] = useState(initialEmail);
  const [password, setPassword] = useState('');
  const action = useAction({ fields: ['email', 'password'] });
  const emailInput = useRef<HTMLInputElement>(null);
  const passwordInput = useRef<HTMLInputElement>(null);

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    let refusedAddress = false;
    const signedIn = await action.run(
      async () => {
        let answer: SignedIn;
        try {
          answer = await api<SignedIn>('POST', '/session', { body: { email, password }, anonymous: true });
        } catch (failure) {
          refusedAddress = failure instanceof ApiError && failure.param === 'email';
          throw failure;
        }
        onSignedIn(answer);
      },
      { staysBusy: true },
    );
    if (signedIn) return;
    if (refusedAddress) {
      emailInput.current?.focus();
    } else {
      setPassword('');
      passwordInput.current?.focus();
    }
  };

  return { email, setEmail, password, setPassword, action, emailInput, passwordInput, submit };
}
