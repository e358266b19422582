import { useState, type FormEvent } from 'react';
import { api } from '../../api/client.js';
import type { Workspace } from '../../api/types.js';
import { Field } from '../../components/Field.js';
import { ErrorNote, PageHeader } from '../../components/states.js';
import { Link } from '../../router.js';
import { useSession } from '../../session.js';
import { useAction } from '../../use-action.js';

export default function WorkspaceSettings() {
  const { me, refresh } = useSession();
  const canEdit = me.permissions.manage_workspace;
  const [name, setName] = useState(me.workspace.name);
  const [currency, setCurrency] = useState(me.workspace.display_currency.toUpperCase());
  const save = useAction();
  /** A refusal of the name or the currency (one with no FX rate) shows at that field. */
  const formError = save.formError('name', 'display_currency');

  const submit = (event: FormEvent) => {
    event.preventDefault();
    void save.run(
      async () => {
        await api<Workspace>('PATCH', '/workspace', { body: { name, display_currency: currency.toLowerCase() } });
        refresh();
      },
      { done: 'Saved.' },
    );
  };

  return (
    <>
      <PageHeader title="Workspace" />
      <form className="card stack narrow" onSubmit={submit}>
        <Field
          label="Workspace name"
          required
          maxLength={200}
          readOnly={!canEdit}
          value={name}
          error={save.fieldError('name')}
          announce
          onChange={(event) => setName(event.target.value)}
        />
        <Field
          label="Display currency"
          required
          maxLength={3}
          readOnly={!canEdit}
          hint="ISO 4217 code; the Overview converts every amount to it."
          value={currency}
          error={save.fieldError('display_currency')}
          announce
          onChange={(event) => setCurrency(event.target.value.toUpperCase())}
        />
        {/* The workspace's flag is what gates webhooks; the Processor page tells how Stripe is connected. */}
        <p className="muted">
          {me.workspace.processor_status === 'connected'
            ? 'Webhooks are sent: the workspace counts as connected to its payment processor.'
            : 'Webhooks are not sent until the payment processor is connected.'}{' '}
          <Link to="/settings/processor">Processor</Link> shows how.
        </p>
        {formError && <ErrorNote message={formError} />}
        {save.done && (
          <p className="result ok" role="status">
            {save.done}
          </p>
        )}
        {canEdit ? (
          <div>
            <button type="submit" className="button primary" disabled={save.busy}>
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
