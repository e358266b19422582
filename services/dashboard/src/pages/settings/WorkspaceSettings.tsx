import { useState, type FormEvent } from 'react';
import { api, errorMessage } from '../../api/client.js';
import type { Workspace } from '../../api/types.js';
import { Field } from '../../components/Field.js';
import { ErrorNote, PageHeader } from '../../components/states.js';
import { useSession } from '../../session.js';

export default function WorkspaceSettings() {
  const { me, refresh } = useSession();
  const canEdit = me.permissions.manage_workspace;
  const [name, setName] = useState(me.workspace.name);
  const [currency, setCurrency] = useState(me.workspace.display_currency.toUpperCase());
  const [error, setError] = useState<string | null>(null);
  const [saved, setSaved] = useState(false);
  const [busy, setBusy] = useState(false);

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    setSaved(false);
    try {
      await api<Workspace>('PATCH', '/workspace', { body: { name, display_currency: currency.toLowerCase() } });
      setSaved(true);
      refresh();
    } catch (failure) {
      setError(errorMessage(failure));
    } finally {
      setBusy(false);
    }
  };

  return (
    <>
      <PageHeader title="Workspace" />
      <form className="card stack narrow" onSubmit={(event) => void submit(event)}>
        <Field
          label="Workspace name"
          required
          maxLength={200}
          readOnly={!canEdit}
          value={name}
          onChange={(event) => setName(event.target.value)}
        />
        <Field
          label="Display currency"
          required
          maxLength={3}
          readOnly={!canEdit}
          hint="ISO 4217 code; the Overview converts every amount to it."
          value={currency}
          onChange={(event) => setCurrency(event.target.value.toUpperCase())}
        />
        <p className="muted">Payment processor: {me.workspace.processor_status}</p>
        {error && <ErrorNote message={error} />}
        {saved && (
          <p className="result ok" role="status">
            Saved.
          </p>
        )}
        {canEdit ? (
          <div>
            <button type="submit" className="button primary" disabled={busy}>
              Save
            </button>
          </div>
        ) : (
          <p className="muted">Only an owner can change these.</p>
        )}
      </form>
    </>
  );
}
