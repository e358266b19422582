import type { InputHTMLAttributes } from 'react';
import type { useSignInForm } from '../use-sign-in-form.js';
import { Field } from './Field.js';

type FocusProps = Pick<InputHTMLAttributes<HTMLInputElement>, 'autoFocus'> & { 'data-autofocus'?: boolean };

/**
 * The Email and Password fields of a sign-in form (useSignInForm), named as the sign-in page's
 * (docs/dashboard-ui.md: tests find them by these labels), with where the focus starts: the sign-in
 * page's Email, or the sign-in-again dialog's Password, the address being filled in there.
 */
export function SignInFields({
  form,
  emailFocus,
  passwordFocus,
}: {
  form: ReturnType<typeof useSignInForm>;
  emailFocus?: FocusProps;
  passwordFocus?: FocusProps;
}) {
  return (
    <>
      <Field
        label="Email"
        type="email"
        autoComplete="username"
        required
        {...emailFocus}
        inputRef={form.emailInput}
        value={form.email}
        action={form.action}
        param="email"
        onChange={(event) => form.setEmail(event.target.value)}
      />
      <Field
        label="Password"
        type="password"
        autoComplete="current-password"
        required
        {...passwordFocus}
        inputRef={form.passwordInput}
        value={form.password}
        action={form.action}
        param="password"
        onChange={(event) => form.setPassword(event.target.value)}
      />
    </>
  );
}
