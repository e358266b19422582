import { useState, type FormEvent } from 'react';
import { api } from '../../api/client.js';
import type { ApiToken, CreatedToken, List } from '../../api/types.js';
import { CopyField } from '../../components/CopyField.js';
import { ConfirmDialog, Dialog, DoneActions } from '../../components/Dialog.js';
import { Field, FormError, NAME_LIMIT } from '../../components/Field.js';
import { Clipped, DataTable, type Column } from '../../components/ListPage.js';
import { Empty, ErrorNote, LiveStatus, Loading, PageHeader } from '../../components/states.js';
import { ApiReferenceLine } from '../../components/ApiReference.js';
import { Time } from '../../components/Time.js';
import { useLoad } from '../../hooks.js';
import { useSession } from '../../session.js';
import { useAction } from '../../use-action.js';
import { BusyButton } from '../../components/BusyButton.js';

/** The server keeps the last four characters; the page shows them the way Stripe does. */
function displayHint(hint: string): string {
  return hint.startsWith('sk_') ? hint : `sk_live_…${hint}`;
}

function CreateTokenDialog({ onClose, onCreated }: { onClose: () => void; onCreated: () => void }) {
  const [name, setName] = useState('');
  /** A refusal of the name (all spaces, say) shows at the field. */
  const create = useAction({ fields: ['name'] });
  const [created, setCreated] = useState<CreatedToken | null>(null);

  const submit = (event: FormEvent) => {
    event.preventDefault();
    void create.run(async () => {
      setCreated(await api<CreatedToken>('POST', '/tokens', { body: { name } }));
      onCreated();
    });
  };

  if (created) {
    const curl = `curl ${window.location.origin}/api/v1/campaigns -H "Authorization: Bearer ${created.token}"`;
    return (
      <Dialog title="Token created" onClose={onClose} wide>
        <div className="stack">
          <p className="notice">Copy this token now: it is shown only once and cannot be recovered.</p>
          <CopyField label="Token" value={created.token} />
          <div>
            <span className="field-label">Try it</span>
            <pre className="code-block">
              <code>{curl}</code>
            </pre>
          </div>
          <DoneActions onDone={onClose} />
        </div>
      </Dialog>
    );
  }
  return (
    <Dialog title="Create token" onClose={onClose}>
      <form className="stack" onSubmit={submit}>
        <Field
          label="Name"
          required
          limit={NAME_LIMIT}
          hint="Where the token is used, e.g. “billing reports”."
          value={name}
          action={create}
          param="name"
          onChange={(event) => setName(event.target.value)}
        />
        <FormError action={create} />
        <div className="dialog-actions">
          <button type="button" className="button" onClick={onClose}>
            Cancel
          </button>
          <BusyButton type="submit" className="button primary" busy={create.busy}>
            Create token
          </BusyButton>
        </div>
      </form>
    </Dialog>
  );
}

/**
 * Who made a token, in the security log's words for its `token.created` entry: the user ("Jane
 * Doe via operator CLI" when the CLI named them with --actor), or what made it with no user
 * (`created_via`: "operator CLI", "Demo setup" for the token npm start seeds). Someone since removed is named
 * by the address kept on the token: the token still works, and the list must not credit it to
 * the CLI. A token with no entry (loaded from a fixture file, or seeded before the demo recorded
 * its token) is the operator CLI's, which made both.
 */
function tokenMaker(token: ApiToken): string {
  if (!token.created_by) return token.created_via ?? 'operator CLI';
  if (token.created_by.removed) return `${token.created_by.email} (removed)`;
  const name = token.created_by.name || token.created_by.email;
  return token.created_via ? `${name} via ${token.created_via}` : name;
}

export default function Tokens() {
  const { me } = useSession();
  const canManage = me.permissions.manage_tokens;
  const tokens = useLoad((signal) => api<List<ApiToken>>('GET', '/tokens', { signal }), 'tokens');
  const [creating, setCreating] = useState(false);
  const [revoking, setRevoking] = useState<ApiToken | null>(null);
  const revocation = useAction();

  const revoke = (token: ApiToken) =>
    void revocation.run(
      async () => {
        await api('POST', `/tokens/${token.id}/revoke`);
        // The list shows the token revoked as the dialog closes, so the dialog knows its Revoke
        // button is gone and gives the focus to the page's content instead of the body.
        tokens.set(await api<List<ApiToken>>('GET', '/tokens'));
        setRevoking(null);
      },
      // Said in the page's status, where the focus (main) is: the row's Revoke just goes.
      { done: `${token.name} revoked: its next request to the API is refused.` },
    );

  const active = tokens.data?.data ?? [];
  const columns: Column<ApiToken>[] = [
    { header: 'Name', cell: (token) => <Clipped text={token.name} />, fill: true },
    { header: 'Token', cell: (token) => <code>{displayHint(token.hint)}</code> },
    {
      header: 'Created by',
      cell: (token) => <Clipped text={tokenMaker(token)} />,
    },
    { header: 'Created', cell: (token) => <Time value={token.created_at} short /> },
    { header: 'Last used', cell: (token) => <Time value={token.last_used_at} empty="Never" short withTime /> },
    { header: 'Limit', cell: (token) => `${token.rate_limit_per_minute}/min`, numeric: true },
    // Each status a badge in words, as the campaigns' are: Active green, Revoked grey with its day
    // (its row has no Revoke, and grey alone says nothing). "Active" as plain text beside a badge
    // read as no status at all.
    {
      header: 'Status',
      status: true,
      cell: (token) =>
        token.revoked_at ? (
          <span className="badge">
            Revoked <Time value={token.revoked_at} short />
          </span>
        ) : (
          <span className="badge badge-active">Active</span>
        ),
    },
  ];
  if (canManage)
    columns.push({
      header: 'Actions',
      actions: true,
      // Every row's button is named "Revoke" (the spec's name for it): its description says which
      // token, for a screen reader moving from button to button.
      cell: (token) =>
        !token.revoked_at && (
          <>
            <button
              type="button"
              className="button small danger-outline"
              aria-describedby={`revoke-${token.id}`}
              onClick={() => setRevoking(token)}
            >
              Revoke
            </button>
            <span id={`revoke-${token.id}`} hidden>
              {token.name}
            </span>
          </>
        ),
    });
  return (
    <>
      <PageHeader title="API tokens">
        {canManage && (
          <button
            type="button"
            className="button primary"
            onClick={() => {
              // A new token is not what the last revocation's note is about.
              revocation.clear();
              setCreating(true);
            }}
          >
            Create token
          </button>
        )}
      </PageHeader>
      <p className="muted">
        Tokens read this workspace through the REST API at <code>/api/v1</code>. Revoking one refuses its next request.
        {/* The API writes last_used_at at most once a minute a token (authenticate.ts), so a token
            used a moment ago can show an older time; say so rather than look stale. */}{' '}
        Last used can be up to a minute behind.
      </p>
      <ApiReferenceLine about="Every endpoint, its parameters and its errors" />
      <LiveStatus>{revocation.done}</LiveStatus>
      {tokens.loading && !tokens.data && <Loading />}
      {tokens.error && <ErrorNote message={tokens.error} onRetry={tokens.reload} />}
      {tokens.data && active.length === 0 && <Empty>No tokens yet.</Empty>}
      {active.length > 0 && (
        <DataTable
          caption="API tokens"
          columns={columns}
          rows={active}
          rowClass={(token) => (token.revoked_at ? 'revoked' : undefined)}
          stacks
        />
      )}
      {creating && <CreateTokenDialog onClose={() => setCreating(false)} onCreated={tokens.reload} />}
      {revoking && (
        <ConfirmDialog
          title="Revoke token"
          message={
            <p>
              Revoke <strong>{revoking.name}</strong> (<code>{displayHint(revoking.hint)}</code>)? Its next request to
              the API is refused. This cannot be undone.
            </p>
          }
          confirmLabel="Revoke"
          action={revocation}
          onConfirm={() => revoke(revoking)}
          onClose={() => setRevoking(null)}
        />
      )}
    </>
  );
}
