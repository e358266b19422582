import { useState, type FormEvent } from 'react';
import { api, errorMessage } from '../api/client.js';
import { AuthCard } from '../components/AuthCard.js';
import { Field } from '../components/Field.js';
import { ErrorNote } from '../components/states.js';
import { Link } from '../router.js';

export default function ForgotPassword() {
  const [email, setEmail] = useState('');
  const [sent, setSent] = useState(false);
  const [error, setError] = useState<string | null>(null);

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setError(null);
    try {
      await api('POST', '/password-reset', { body: { email }, anonymous: true });
      setSent(true);
    } catch (failure) {
      setError(errorMessage(failure));
    }
  };

  return (
    <AuthCard title="Reset your password">
      {sent ? (
        <p role="status">
          If an account uses that address and e-mail is set up, a link to set a new password is on its way. Otherwise,
          ask an owner or admin of your workspace for a reset link.
        </p>
      ) : (
        <form className="stack" onSubmit={(event) => void submit(event)}>
          <Field
            label="Email"
            type="email"
            autoComplete="username"
            required
            value={email}
            onChange={(event) => setEmail(event.target.value)}
          />
          {error && <ErrorNote message={error} />}
          <button type="submit" className="button primary block">
            Send reset link
          </button>
        </form>
      )}
      <Link to="/sign-in" className="subtle-link">
        Back to sign in
      </Link>
    </AuthCard>
  );
}
