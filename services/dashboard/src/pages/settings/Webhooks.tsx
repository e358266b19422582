import { useEffect, useRef, useState } from 'react';
import { MAX_WEBHOOK_ENDPOINTS, TOO_MANY_WEBHOOK_ENDPOINTS } from '@retention/core/webhook-endpoints';
import { api } from '../../api/client.js';
import type { CreatedEndpoint, Endpoint, List } from '../../api/types.js';
import { BreakableUrl } from '../../components/BreakableUrl.js';
import { DataTable, type Column } from '../../components/ListPage.js';
import { Empty, ErrorNote, LiveStatus, Loading, PageHeader } from '../../components/states.js';
import { ApiReferenceLine } from '../../components/ApiReference.js';
import { Time } from '../../components/Time.js';
import { useLoad } from '../../hooks.js';
import { Link } from '../../router.js';
import { useSession } from '../../session.js';
import { useAction } from '../../use-action.js';
import { EnabledState, EndpointFormDialog, EventsCell, SecretDialog } from './webhook-parts.js';
import { BusyButton } from '../../components/BusyButton.js';
import { focusMainContent } from '../../focus.js';

/** An auto-disabled endpoint's banner: why, and the way back on; until someone turns it on or dismisses it. */
export function DisabledBanner({
  endpoint,
  canManage,
  onChange,
}: {
  endpoint: Endpoint;
  canManage: boolean;
  onChange: (endpoint: Endpoint) => void;
}) {
  const acting = useAction();
  if (!endpoint.alert) return null;
  // The banner goes with the alert, and the button with it: the focus goes to the page's content,
  // where the page's status says what happened (bannerOutcome), not to the body.
  const act = (action: 'enable' | 'dismiss-alert') =>
    void acting.run(async () => {
      onChange(await api<Endpoint>('POST', `/webhooks/${endpoint.id}/${action}`));
      focusMainContent();
    });
  return (
    <div className="banner" role="region" aria-label={`${endpoint.name} was turned off`}>
      <p>
        <strong>{endpoint.name}</strong> was turned off <Time value={endpoint.alert.disabled_at} /> after 10 failed
        deliveries in a row. Events are not sent to it until it is turned on again; those recorded meanwhile are in its
        delivery log as skipped, and once it is on, Retry failed since… on its page sends them.
      </p>
      {canManage && (
        <div className="banner-actions">
          <BusyButton type="button" className="button small primary" onClick={() => act('enable')} busy={acting.busy}>
            Turn on
          </BusyButton>
          <BusyButton type="button" className="button small" onClick={() => act('dismiss-alert')} busy={acting.busy}>
            Dismiss
          </BusyButton>
        </div>
      )}
      {acting.error && <ErrorNote message={acting.error} />}
    </div>
  );
}

/**
 * What the list says after an endpoint changes in it (the banner's Turn on or Dismiss, the row's
 * switch): turned on, what happens to what it missed; the notice dismissed, that it stays off.
 * Each in its own style: a dismissal is no success to celebrate. Nothing for a turn off, whose
 * switch says it. Null when there is nothing to say.
 */
function bannerOutcome(before: Endpoint, after: Endpoint): { text: string; ok: boolean } | null {
  if (!before.enabled && after.enabled) {
    return {
      ok: true,
      text:
        `${after.name} was turned on: new events are sent to it. Those recorded while it was off are in its ` +
        'delivery log as skipped; Retry failed since… on its page sends them.',
    };
  }
  if (before.alert && !after.alert && !after.enabled) {
    return { ok: false, text: `Notice dismissed: ${after.name} stays off until someone turns it on.` };
  }
  return null;
}

/** What an endpoint's page, left for this list, has to say here (its Delete); taken once. */
let pendingOutcome: string | null = null;

/**
 * Says `text` in the list's status once it is next shown: a page that ends by coming here (an
 * endpoint deleted) would otherwise leave the list to show the endpoint missing without a word.
 * Held here rather than in the address or the history entry, so Back to the list, or a reload,
 * does not say it again.
 */
export function sayOnWebhooksList(text: string): void {
  pendingOutcome = text;
}

export default function Webhooks() {
  const { me } = useSession();
  const canManage = me.permissions.manage_webhooks;
  const endpoints = useLoad((signal) => api<List<Endpoint>>('GET', '/webhooks', { signal }), 'webhooks');
  const [adding, setAdding] = useState(false);
  const [secret, setSecret] = useState<string | null>(null);

  const [outcome, setOutcome] = useState<{ text: string; ok: boolean } | null>(null);
  // Set after the first paint, not as the initial state: the live region is then on the page,
  // empty, before it says it, so a screen reader reads it out (LiveStatus).
  useEffect(() => {
    const text = pendingOutcome;
    pendingOutcome = null;
    if (text !== null) setOutcome({ text, ok: true });
  }, []);

  // The list as last changed, not as the render that made a control saw it: two answers that
  // come one after the other (Dismiss on one banner, Turn on on another) each change their own
  // endpoint, and the later one does not put back the earlier one's banner.
  const latest = useRef(endpoints.data);
  latest.current = endpoints.data;
  const replace = (changed: Endpoint) => {
    const current = latest.current;
    if (!current) return;
    const before = current.data.find((each) => each.id === changed.id);
    // A later change says its own outcome, or clears the last one (a stale "stays off").
    setOutcome(before ? bannerOutcome(before, changed) : null);
    const next = { ...current, data: current.data.map((each) => (each.id === changed.id ? changed : each)) };
    latest.current = next;
    endpoints.set(next);
  };
  const list = endpoints.data?.data ?? [];
  // The server refuses one more (409); the page says so in place of a button that could only fail.
  const full = list.length >= MAX_WEBHOOK_ENDPOINTS;
  const columns: Column<Endpoint>[] = [
    {
      header: 'Name',
      cell: (endpoint) => (
        <Link to={`/settings/webhooks/${endpoint.id}`} className="clip" title={endpoint.name}>
          {endpoint.name}
        </Link>
      ),
    },
    // Whole, wrapping after its separators in the room the other columns leave: clipped to one
    // line, endpoints on one host and port read alike ("https://127.0.0.1:355…").
    {
      header: 'URL',
      cell: (endpoint) => (
        <span className="url-cell">
          <BreakableUrl url={endpoint.url} />
        </span>
      ),
      fill: true,
    },
    // Clipped already (the whole list on hover, and with the codes on the endpoint's page), so it
    // is what gives way when the list is short of room: in a zone written "GMT+1", with an
    // endpoint turned off, the list stacked at 1280 px for want of 7 px.
    { header: 'Events', cell: (endpoint) => <EventsCell events={endpoint.events} clipped />, narrows: true },
    {
      header: 'Enabled',
      cell: (endpoint) => <EnabledState endpoint={endpoint} canManage={canManage} onChange={replace} inList />,
    },
    // As the endpoint's page names it: "Failures 0" beside a Last failure read as a contradiction.
    // On two lines where the list is short of room: one line took 90 px more than "Failures" did.
    { header: 'Consecutive failures', cell: (endpoint) => endpoint.failure_count, numeric: true, headerWraps: true },
    {
      header: 'Last success',
      cell: (endpoint) => <Time value={endpoint.last_success_at} empty="Never" short withTime />,
    },
    {
      header: 'Last failure',
      cell: (endpoint) => <Time value={endpoint.last_failure_at} empty="Never" short withTime />,
    },
  ];

  return (
    <>
      <PageHeader title="Outbound webhooks">
        {canManage && !full && (
          <button type="button" className="button primary" onClick={() => setAdding(true)}>
            Add endpoint
          </button>
        )}
      </PageHeader>
      <p className="muted">Signed HTTPS POSTs to your endpoints when campaigns and cancel sessions change.</p>
      <ApiReferenceLine about="Event types, their fields, verifying signatures and retries" section="webhooks" />
      {canManage && full && <p className="notice">{TOO_MANY_WEBHOOK_ENDPOINTS}</p>}
      {me.workspace.processor_status !== 'connected' && (
        // Every role that opens this page learns it; the Processor page is the owners' only.
        <p className="notice" role="status">
          Outbound webhooks are paused: the payment processor is not connected and syncing. Events recorded meanwhile
          are not sent, then or later.{' '}
          {me.permissions.manage_processor ? (
            <>
              Connect it on the <Link to="/settings/processor">Processor</Link> page.
            </>
          ) : (
            'An owner can connect it on the Processor page.'
          )}
        </p>
      )}
      <LiveStatus className={outcome?.ok ? 'result ok' : 'notice page-notice'}>{outcome?.text}</LiveStatus>
      {list.map((endpoint) => (
        <DisabledBanner key={endpoint.id} endpoint={endpoint} canManage={canManage} onChange={replace} />
      ))}
      {endpoints.loading && !endpoints.data && <Loading />}
      {endpoints.error && <ErrorNote message={endpoints.error} onRetry={endpoints.reload} />}
      {endpoints.data && list.length === 0 && <Empty>No endpoints yet.</Empty>}
      {list.length > 0 && <DataTable caption="Webhook endpoints" columns={columns} rows={list} stacks />}
      {adding && (
        <EndpointFormDialog
          endpoint={null}
          eventTypes={me.event_types}
          onClose={() => setAdding(false)}
          onSaved={(saved) => {
            setAdding(false);
            setSecret((saved as CreatedEndpoint).secret);
            endpoints.reload();
          }}
        />
      )}
      {secret && <SecretDialog title="Endpoint added" secret={secret} onClose={() => setSecret(null)} />}
    </>
  );
}
