import { useEffect, useId, useState, type FormEvent } from 'react';
import { api } from '../../api/client.js';
import { CopyField } from '../../components/CopyField.js';
import { BreakableUrl } from '../../components/BreakableUrl.js';
import { ConfirmDialog } from '../../components/Dialog.js';
import { FormError } from '../../components/Field.js';
import { SecretField } from '../../components/SecretField.js';
import { Time } from '../../components/Time.js';
import { ErrorNote, Loading, PageHeader } from '../../components/states.js';
import { useLoad } from '../../hooks.js';
import { useSession } from '../../session.js';
import { useAction } from '../../use-action.js';
import { backfillPhaseLabel } from '../../labels.js';
import { processorStory, STRIPE_STATUS_TEXT, type StripeStatus } from './processor-story.js';
import { BusyButton } from '../../components/BusyButton.js';
// A key's mode by the rule the server refuses it with, so the page asks before sending one.
import { modeOfKey, type ProcessorMode, type SetAsideReason } from '@retention/core/processor-modes';
import { MODE_TEXT, MODE_UNKNOWN, modeSwitchMessage, setAsideText } from './processor-mode.js';
import { IMPORT_REFRESH_MS, ImportProgress, importInProgress, type Backfill } from './ImportProgress.js';
import { StripeEventTypes, StripeLink } from './StripeEndpointSetup.js';
import { allRefused, RefusedDeliveries, REFUSING_STATUS_TEXT, type Refused } from './RefusedDeliveries.js';
import { useRefreshWhile } from '../../use-refresh-while.js';
import { EventErrors, type EventsView } from './EventErrors.js';
import { stripeReachNote } from './stripe-reach.js';

/** GET /dashboard/api/processor (docs/dashboard-api.md, "Processor"), told apart by its status. */
interface NotConnected {
  status: Extract<StripeStatus, 'not_connected'>;
  provider: null;
  webhook_url: string;
  stripe_event_types: string[];
}

interface Connection extends EventsView {
  status: Exclude<StripeStatus, 'not_connected'>;
  provider: 'stripe';
  webhook_url: string;
  stripe_event_types: string[];
  webhook_secret_last4: string;
  api_key_last4: string | null;
  mode: ProcessorMode | null;
  disconnected_reason: string | null;
  connected_at: string | null;
  last_event_at: string | null;
  events_received: number;
  events_set_aside: Record<SetAsideReason, number>;
  deliveries_refused: Refused | null;
  backfill: Backfill;
}

type Setup = NotConnected | Connection;

/**
 * What Connect does to outbound webhooks when the connection is not `connected` yet and no key
 * would connect it at once, said before the button is pressed (docs/dashboard-ui.md, "Processor").
 */
const CONNECT_PAUSE_WARNING =
  "Without an API key, outbound webhooks are paused from when you click Connect until Stripe's first event " +
  'arrives: events recorded in between, and deliveries waiting for a retry, are never sent. With a key (step 4), ' +
  'Stripe is connected at once and nothing pauses.';

/** The read permissions the restricted key needs, in the names Stripe's key form gives them. */
const KEY_READS = ['Customers', 'Subscriptions', 'Invoices', 'Invoice payments', 'Payment intents', 'Events'];

/** Disconnect's consequences, in its confirmation. */
const DISCONNECT_CONSEQUENCES =
  "Disconnect Stripe? From then on, Stripe's events to this workspace's webhook URL are refused with 400. Outbound " +
  'webhooks stop: events recorded while disconnected are not sent, then or later, and deliveries waiting for a ' +
  'retry are dropped. Connecting again resumes them.';

/**
 * What Disconnect does not stop, in Stripe (docs/processor.md, "Disconnecting"): the endpoint
 * there is Stripe's, and only its owner can turn it off.
 */
const DISCONNECT_STRIPE_SIDE =
  'Stripe keeps sending events to the endpoint and retries each for three days, emails your Stripe account about ' +
  'the failures, and may disable the endpoint after several days of them. So disable or delete the endpoint in ' +
  'Stripe too (Developers, Webhooks); to connect again later, enable it again first.';

/**
 * How long the page follows retried events: their five attempts back off over about a minute
 * (2 s to 32 s) before one parks again (docs/processor.md, "Poison events").
 */
const RETRY_FOLLOW_MS = 120_000;

/** Settings, Processor (owners): the URL to register in Stripe, connect, status, backfill, disconnect. */
export default function Processor() {
  const { me, refresh } = useSession();
  const setup = useLoad((signal) => api<Setup>('GET', '/processor', { signal }), 'processor');
  const [webhookSecret, setWebhookSecret] = useState('');
  const [apiKey, setApiKey] = useState('');
  const [confirmRemoval, setConfirmRemoval] = useState(false);
  const [confirmDisconnect, setConfirmDisconnect] = useState(false);
  /** The mode a key of the other mode would switch the connection to, while its confirmation is open. */
  const [switchTo, setSwitchTo] = useState<ProcessorMode | null>(null);
  /**
   * The workspace's processor flag as this page's last action left it (the domain sets it with the
   * connection: `connected` only while the connection is). The session's flag is read once at
   * sign-in, so the page told the flag from before Connect beside the connection after it; the
   * session is read again too, for the other pages.
   */
  const [flagAfterAction, setFlagAfterAction] = useState<string | null>(null);
  /**
   * Connect's refusal of the secret or the key shows at that field; any other refusal (of
   * Connect, Import again or Disconnect) under the form, as before.
   */
  const action = useAction({ fields: ['webhook_secret', 'api_key'] });
  const removal = useAction();
  const disconnection = useAction();
  const modeSwitch = useAction();
  const { busy } = action;
  const resumeHintId = useId();
  const loaded = setup.data;
  /** Parked events were just retried: the page reads the status until they are applied (or a while passed). */
  const [followRetry, setFollowRetry] = useState(false);
  useEffect(() => {
    if (!followRetry) return;
    const timer = window.setTimeout(() => setFollowRetry(false), RETRY_FOLLOW_MS);
    return () => window.clearTimeout(timer);
  }, [followRetry]);
  const connected = loaded !== undefined && loaded.status !== 'not_connected' ? loaded : null;
  // An import's progress, and retried events' outcome, move without a reload (docs/dashboard-ui.md, "Processor").
  useRefreshWhile(
    connected !== null && (importInProgress(connected.backfill) || (followRetry && connected.events_pending > 0)),
    loaded,
    setup.reload,
    IMPORT_REFRESH_MS,
  );

  const changed = (next: Setup) => {
    setup.set(next);
    if (next.status !== 'not_connected') setFlagAfterAction(next.status === 'connected' ? 'connected' : 'disconnected');
    refresh();
  };

  const act = (path: string, body?: unknown) =>
    void action.run(async () => {
      changed(await api<Setup>('POST', path, body === undefined ? {} : { body }));
      setWebhookSecret('');
      setApiKey('');
    });

  const disconnect = () =>
    void disconnection.run(async () => {
      changed(await api<Setup>('POST', '/processor/disconnect', { body: {} }));
      setConfirmDisconnect(false);
    });

  const removeKey = () =>
    void removal.run(async () => {
      changed(await api<Setup>('POST', '/processor/remove-key', { body: {} }));
      setConfirmRemoval(false);
    });

  // An empty field keeps what is stored: the key, or (once connected) the signing secret.
  const connectBody = () => ({
    ...(webhookSecret.trim() && { webhook_secret: webhookSecret.trim() }),
    ...(apiKey.trim() && { api_key: apiKey.trim() }),
  });

  const connect = (event: FormEvent) => {
    event.preventDefault();
    // A key of the other mode than the connection's switches it: asked first (the server refuses it unconfirmed).
    const mode = setup.data?.status === 'not_connected' ? null : (setup.data?.mode ?? null);
    if (mode && apiKey.trim() && modeOfKey(apiKey.trim()) !== mode) return setSwitchTo(modeOfKey(apiKey.trim()));
    act('/processor/connect', connectBody());
  };

  const switchMode = () =>
    void modeSwitch.run(async () => {
      changed(
        await api<Setup>('POST', '/processor/connect', { body: { ...connectBody(), confirm_mode_switch: true } }),
      );
      setWebhookSecret('');
      setApiKey('');
      setSwitchTo(null);
    });

  if (setup.loading && !setup.data) return <Loading />;
  if (setup.error || !setup.data)
    return <ErrorNote message={setup.error ?? 'Nothing to show'} onRetry={setup.reload} />;
  const current = setup.data;
  const connection = current.status === 'not_connected' ? null : current;
  const storedKey = connection?.api_key_last4 ? `rk_…${connection.api_key_last4}` : null;
  const flag = flagAfterAction ?? me.workspace.processor_status;

  const mode = connection?.mode ?? null;
  // Said only when it applies: with a key typed, or a stored one to try again, Connect connects at once.
  const pauses = current.status !== 'connected' && !apiKey.trim() && !storedKey;

  return (
    <>
      <PageHeader title="Processor" />
      <p className="muted">
        Connect your Stripe account so that failed payments, subscriptions and cancellations arrive here by themselves.
      </p>
      <section className="card stack processor-card" aria-labelledby="processor-status">
        <h2 id="processor-status">Stripe</h2>
        <p>
          Stripe:{' '}
          <strong>
            {current.status === 'connected' && allRefused(connection?.deliveries_refused)
              ? REFUSING_STATUS_TEXT
              : STRIPE_STATUS_TEXT[current.status]}
          </strong>
          {connection?.disconnected_reason === 'key_rejected' &&
            ' (Stripe refused the API key: connect again with a new one)'}
        </p>
        {connection && <RefusedDeliveries refused={connection.deliveries_refused} />}
        {/* In the Workspace page's words (whether outbound webhooks are sent, and why), less the
            status the line above already says. */}
        <p>{processorStory(flag, current.status, true, allRefused(connection?.deliveries_refused), true)}</p>
        {connection && (
          <dl className="details">
            <dt>Signing secret</dt>
            <dd>whsec_…{connection.webhook_secret_last4}</dd>
            <dt>API key</dt>
            <dd>
              <span>{storedKey ?? 'none'}</span>
              {storedKey && (
                <>
                  {' '}
                  <BusyButton
                    type="button"
                    className="button small danger-outline"
                    busy={busy || removal.busy}
                    onClick={() => setConfirmRemoval(true)}
                  >
                    Remove API key
                  </BusyButton>
                </>
              )}
            </dd>
            <dt>Mode</dt>
            <dd>{connection.mode ? MODE_TEXT[connection.mode] : MODE_UNKNOWN}</dd>
            <dt>Last event received</dt>
            <dd>
              <Time value={connection.last_event_at} empty="none yet" sayUtc />
            </dd>
            <dt>Events received</dt>
            <dd>
              {connection.events_received} ({connection.events_pending} waiting, {connection.events_parked} parked)
            </dd>
            <dt>Set aside</dt>
            <dd>{setAsideText(connection.events_set_aside, connection.mode) ?? 'none'}</dd>
            <dt>Import</dt>
            <dd>
              <ImportProgress backfill={connection.backfill} />
            </dd>
          </dl>
        )}
        {connection && connection.status !== 'disconnected' && (
          <>
            <div>
              {connection.api_key_last4 && (
                <BusyButton
                  type="button"
                  className="button"
                  busy={busy}
                  onClick={() => act('/processor/sync')}
                  aria-describedby={connection.backfill.resumable ? resumeHintId : undefined}
                >
                  Import again
                </BusyButton>
              )}{' '}
              <BusyButton
                type="button"
                className="button danger"
                busy={busy || disconnection.busy}
                onClick={() => setConfirmDisconnect(true)}
              >
                Disconnect
              </BusyButton>
            </div>
            {connection.api_key_last4 && connection.backfill.resumable && (
              // The same words as the run's error ("then Import again") and the docs: the button
              // keeps its name, and says what it does this time (docs/dashboard-ui.md, "Processor").
              <p className="hint" id={resumeHintId}>
                Import again goes on from where the last run stopped (
                {backfillPhaseLabel(connection.backfill.phase ?? '')}), keeping what it imported, rather than starting
                over.
              </p>
            )}
          </>
        )}
      </section>
      {connection && (
        <EventErrors
          status={connection}
          canRetry={me.permissions.manage_processor}
          onRetried={(next) => {
            setup.set(next);
            setFollowRetry(true);
          }}
          reload={setup.reload}
        />
      )}
      <form className="card stack processor-card" onSubmit={connect} aria-labelledby="processor-connect">
        <h2 id="processor-connect">{connection ? 'Connect again' : 'Connect Stripe'}</h2>
        {connection && (
          // Read as "connect a second account" otherwise (docs/processor.md, "Reconnecting").
          <p>
            To roll the signing secret or change the key: the connection and its webhook URL stay the same, and Stripe
            keeps sending to it.
          </p>
        )}
        {/* A guide in Stripe's own words, step by step (docs/dashboard-ui.md, "Processor: the steps
            in Stripe"): it read as notes for whoever runs the service. */}
        <ol className="setup-steps" aria-label="Steps to connect Stripe">
          <li>
            <p>
              <strong>Add an endpoint in Stripe.</strong> In Stripe, open Developers,{' '}
              <StripeLink path="webhooks" mode={mode}>
                Webhooks
              </StripeLink>
              , and add an endpoint with this URL. Stripe asks for an API version: any works, so keep the one it
              suggests.
            </p>
            <CopyField label="Webhook URL for Stripe" value={current.webhook_url} />
            <StripeReachNote webhookUrl={current.webhook_url} />
          </li>
          <li>
            <p>
              <strong>Select these {current.stripe_event_types.length} events</strong> on the endpoint (&ldquo;Select
              events&rdquo;). Any other event Stripe sends is received and ignored.
            </p>
            <StripeEventTypes eventTypes={current.stripe_event_types} />
          </li>
          <li>
            <p>
              <strong>Paste the signing secret.</strong> Once the endpoint is created, open it in Stripe, reveal its
              signing secret (<code>whsec_…</code>) and paste it here.
            </p>
            <SecretField
              label="Webhook signing secret"
              shownName="signing secret"
              // Once connected, empty keeps the stored secret: changing only the key needs no pasting it again.
              required={!connection}
              hint={
                connection
                  ? 'Leave empty to keep the current signing secret (shown above); a new one replaces it.'
                  : undefined
              }
              placeholder="whsec_…"
              action={action}
              param="webhook_secret"
              value={webhookSecret}
              onChange={(event) => setWebhookSecret(event.target.value)}
            />
          </li>
          <li>
            <p>
              <strong>Optional: paste a restricted API key.</strong> With one, your existing customers, subscriptions
              and open invoices are imported, and the reason each payment failed is looked up. In Stripe, open
              Developers,{' '}
              <StripeLink path="apikeys" mode={mode}>
                API keys
              </StripeLink>
              , choose &ldquo;Create restricted key&rdquo;, set these to Read and leave the rest at None:{' '}
              {KEY_READS.join(', ')}.
            </p>
            <SecretField
              label="Restricted API key (optional)"
              shownName="API key"
              // The connection's own mode's prefix: a test-mode connection is not shown a live key to paste.
              placeholder={connection?.mode === 'test' ? 'rk_test_…' : 'rk_live_…'}
              hint={
                storedKey
                  ? `Leave empty to keep the current key (${storedKey}); a new key replaces it.`
                  : 'Leave empty to connect without a key: decline codes are then not looked up and nothing is imported.'
              }
              action={action}
              param="api_key"
              value={apiKey}
              onChange={(event) => setApiKey(event.target.value)}
            />
          </li>
        </ol>
        {pauses && (
          // Said before it happens (docs/processor.md, "Status"): a key-less connection is
          // `pending` until Stripe's first signed event, and the dispatcher sends nothing meanwhile.
          <p className="notice" role="note" aria-label="Before you connect">
            {CONNECT_PAUSE_WARNING}
          </p>
        )}
        <FormError action={action} />
        <div>
          {/* Enabled with the secret still empty, as the endpoint form's Save: the browser's required
              check then says which field is missing and focuses it, where a disabled button gave no
              reason. */}
          <BusyButton type="submit" className="button primary" busy={busy}>
            Connect
          </BusyButton>
        </div>
      </form>
      {confirmDisconnect && connection && (
        <ConfirmDialog
          title="Disconnect Stripe"
          message={
            <>
              <p>{DISCONNECT_CONSEQUENCES}</p>
              <p>{DISCONNECT_STRIPE_SIDE}</p>
            </>
          }
          confirmLabel="Disconnect"
          action={disconnection}
          onConfirm={disconnect}
          onClose={() => setConfirmDisconnect(false)}
        />
      )}
      {switchTo && connection?.mode && (
        <ConfirmDialog
          title={`Switch to ${switchTo} mode`}
          message={<p>{modeSwitchMessage(connection.mode, switchTo)}</p>}
          confirmLabel={`Switch to ${switchTo} mode`}
          action={modeSwitch}
          onConfirm={switchMode}
          onClose={() => setSwitchTo(null)}
        />
      )}
      {confirmRemoval && storedKey && (
        <ConfirmDialog
          title="Remove API key"
          message={
            <p>
              Remove the API key <strong>{storedKey}</strong>? Decline codes are no longer looked up and nothing can be
              imported until you connect again with a key. Events from Stripe keep arriving.
            </p>
          }
          confirmLabel="Remove API key"
          action={removal}
          onConfirm={removeKey}
          onClose={() => setConfirmRemoval(false)}
        />
      )}
    </>
  );
}

/**
 * Stripe cannot send to this URL (stripe-reach.ts): a fault of the service's BASE_URL, which the
 * owner cannot fix, so it is a note for whoever runs the service, labelled so, and shown only
 * when it applies.
 */
function StripeReachNote({ webhookUrl }: { webhookUrl: string }) {
  const note = stripeReachNote(webhookUrl);
  if (!note) return null;
  // The command as code, as a terminal takes it. On a phone only its URL wraps, after its
  // separators: the browser would otherwise break `--forward-to` between its two hyphens.
  return (
    <p className="notice" role="note" aria-label="For whoever runs this service">
      <strong>For whoever runs this service:</strong> {note.text}
      {note.forwardTo && (
        <>
          {' '}
          <code>
            <span className="command-words">stripe listen --forward-to</span> <BreakableUrl url={note.forwardTo} />
          </code>
        </>
      )}
    </p>
  );
}
