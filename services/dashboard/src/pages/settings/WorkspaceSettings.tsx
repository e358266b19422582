import { useState, type FormEvent } from 'react';
import { api } from '../../api/client.js';
import type { Workspace, WorkspaceWithProcessor } from '../../api/types.js';
import { Field, NAME_LIMIT, Outcome } from '../../components/Field.js';
import { ErrorNote, PageHeader } from '../../components/states.js';
import { Link } from '../../router.js';
import { useSession } from '../../session.js';
import { useAction } from '../../use-action.js';
import { useLoad } from '../../hooks.js';
import { processorStory } from './processor-story.js';
import { BusyButton } from '../../components/BusyButton.js';

export default function WorkspaceSettings() {
  const { me, refresh } = useSession();
  const canEdit = me.permissions.manage_workspace;
  const [name, setName] = useState(me.workspace.name);
  const [currency, setCurrency] = useState(me.workspace.display_currency.toUpperCase());
  /** A refusal of the name or the currency (one with no FX rate) shows at that field. */
  const save = useAction({ fields: ['name', 'display_currency'] });
  /** For the processor sentence; the fields start from the session's copy of the workspace. */
  const workspace = useLoad((signal) => api<WorkspaceWithProcessor>('GET', '/workspace', { signal }), 'workspace');
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
          limit={NAME_LIMIT}
          readOnly={!canEdit}
          value={name}
          action={save}
          param="name"
          onChange={(event) => setName(event.target.value)}
        />
        {/* Held to 3 like the names to 200 (Field's limit), not cut: "Swiss franc" pasted became
            "SWI". Spaces around a pasted code are dropped as it comes in. */}
        <Field
          label="Display currency"
          required
          limit={3}
          readOnly={!canEdit}
          hint="ISO 4217 code; the Overview converts every amount to it."
          value={currency}
          action={save}
          param="display_currency"
          onChange={(event) => setCurrency(event.target.value.trim().toUpperCase())}
        />
        {/* The Processor page's account, in its words (processor-story.ts), for every role: what
            the flag means for webhooks, and whether Stripe is behind it; the link for an owner. */}
        {/* A failed load is said, with Try again: the sentence would otherwise just be missing. */}
        {workspace.error && <ErrorNote message={workspace.error} onRetry={workspace.reload} />}
        {workspace.data && (
          <p className="muted">
            {processorStory(
              workspace.data.processor_status,
              workspace.data.processor_connection_status,
              me.permissions.manage_processor,
            )}{' '}
            {me.permissions.manage_processor && (
              <>
                <Link to="/settings/processor">Processor</Link> shows how.
              </>
            )}
          </p>
        )}
        <Outcome action={save} />
        {canEdit ? (
          <div>
            <BusyButton type="submit" className="button primary" busy={save.busy}>
              Save
            </BusyButton>
          </div>
        ) : (
          <p className="muted">Only an owner can change these.</p>
        )}
      </form>
    </>
  );
}
