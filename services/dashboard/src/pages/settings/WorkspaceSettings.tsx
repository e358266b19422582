import { useId, useState, type FormEvent } from 'react';
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
import { LOCALE } from '../../format.js';

export default function WorkspaceSettings() {
  const { me, refresh } = useSession();
  const canEdit = me.permissions.manage_workspace;
  const [name, setName] = useState(me.workspace.name);
  const [currency, setCurrency] = useState(me.workspace.display_currency);
  /** A refusal of the name or the currency (one with no FX rate) shows at that field. */
  const save = useAction({ fields: ['name', 'display_currency'] });
  /** For the processor sentence; the fields start from the session's copy of the workspace. */
  const workspace = useLoad((signal) => api<WorkspaceWithProcessor>('GET', '/workspace', { signal }), 'workspace');
  const submit = (event: FormEvent) => {
    event.preventDefault();
    void save.run(
      async () => {
        // The name as kept (its spaces tidied: docs/dashboard-api.md), not as typed.
        const saved = await api<Workspace>('PATCH', '/workspace', { body: { name, display_currency: currency } });
        setName(saved.name);
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
        <CurrencySelect
          value={currency}
          choices={workspace.data?.display_currencies}
          disabled={!canEdit}
          refusal={save.fieldError('display_currency')}
          onChange={(code) => {
            save.edited('display_currency');
            setCurrency(code);
          }}
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

/**
 * The Display currency as a choice among the codes with an exchange rate (`GET /workspace`'s
 * `display_currencies`), each with its name ("EUR · Euro"): a free-text field took any three
 * letters and was refused afterwards. The current code is always among them (a rate is never
 * removed, but the list is not loaded yet on the first paint). A refusal still shows at the
 * field, as Field shows one (another tab, or an operator's change of the rates meanwhile).
 */
function CurrencySelect({
  value,
  choices,
  disabled,
  refusal,
  onChange,
}: {
  value: string;
  choices: string[] | undefined;
  disabled: boolean;
  refusal: string | null;
  onChange: (code: string) => void;
}) {
  const id = useId();
  const codes = [...new Set([value, ...(choices ?? [])])].sort();
  return (
    <div className="field">
      <label htmlFor={id}>Display currency</label>
      <select
        id={id}
        value={value}
        disabled={disabled}
        aria-invalid={refusal ? true : undefined}
        aria-describedby={`${id}-hint${refusal ? ` ${id}-error` : ''}`}
        onChange={(event) => onChange(event.target.value)}
      >
        {codes.map((code) => (
          <option key={code} value={code}>
            {currencyLabel(code)}
          </option>
        ))}
      </select>
      <span className="hint" id={`${id}-hint`}>
        The Overview converts every amount to it.
      </span>
      {refusal && (
        <span className="field-error" id={`${id}-error`} role="alert">
          {refusal}
        </span>
      )}
    </div>
  );
}

const currencyNames = new Intl.DisplayNames([LOCALE], { type: 'currency', fallback: 'none' });

/** "EUR · Euro"; the code alone where the browser knows no name for it. */
function currencyLabel(code: string): string {
  const upper = code.toUpperCase();
  const name = currencyNames.of(upper);
  return name ? `${upper} · ${name}` : upper;
}
