import { useState, type FormEvent } from 'react';
import { api } from '../api/client.js';
import { AuthCard } from '../components/AuthCard.js';
import { Field, FormError } from '../components/Field.js';
import { useLoad } from '../hooks.js';
import { Link } from '../router.js';
import { useAction } from '../use-action.js';
import { BusyButton } from '../components/BusyButton.js';

export default function ForgotPassword() {
  const [email, setEmail] = useState('');
  /** Once asked: whether this service sends email (the same answer for every address). */
  const [sent, setSent] = useState<{ emailed: boolean } | null>(null);
  /**
   * Whether this service sends email, asked first: without it no link can come, and the page
   * says whom to ask instead of asking for an address. Unknown (null) until answered, and if the
   * question fails: then the form is shown, and its answer says the same.
   */
  const emails =
    useLoad(
      (signal) => api<{ emails: boolean }>('GET', '/password-reset', { anonymous: true, signal }),
      'password-reset',
    ).data?.emails ?? null;
  /**
   * The server answers every address alike today and refuses none of them, but a refusal of the
   * address would show at the field, as in every other form.
   */
  const request = useAction({ fields: ['email'] });

  const submit = (event: FormEvent) => {
    event.preventDefault();
    void request.run(async () => {
      const answer = await api<{ emailed?: boolean }>('POST', '/password-reset', { body: { email }, anonymous: true });
      setSent({ emailed: answer.emailed !== false });
    });
  };

  return (
    <AuthCard title="Reset your password">
      {sent?.emailed ? (
        <p role="status">
          If an account uses that address, a link to set a new password is on its way. It works once, for an hour. No
          email? Ask an owner or admin of your workspace for a reset link.
        </p>
      ) : sent ? (
        <p role="status">
          This service does not send email, so no link was sent. Ask an owner or admin of your workspace for a reset
          link, or whoever runs this service if you are or have been an owner.
        </p>
      ) : emails === false ? (
        <p role="status">
          This service does not send email, so it cannot send you a link. Ask someone in your workspace whose role is
          above every role you have held there (an owner, or an admin if you have only ever been a member) to make you
          one: they find Password reset link beside your name in Settings, Team. If you are or have been an owner, ask
          whoever runs this service, who can make one too.
        </p>
      ) : (
        <form className="stack" onSubmit={submit}>
          <Field
            label="Email"
            type="email"
            autoComplete="username"
            required
            value={email}
            action={request}
            param="email"
            onChange={(event) => setEmail(event.target.value)}
          />
          <FormError action={request} />
          <BusyButton type="submit" className="button primary block" busy={request.busy}>
            Send reset link
          </BusyButton>
        </form>
      )}
      <Link to="/sign-in" className="subtle-link">
        Back to sign in
      </Link>
    </AuthCard>
  );
}
