import { useState, type FormEvent } from 'react';
import { api, ApiError } from '../../api/client.js';
import type { Attempt, Endpoint, RolledSecret } from '../../api/types.js';
import { BreakableUrl } from '../../components/BreakableUrl.js';
import { ConfirmDialog, Dialog } from '../../components/Dialog.js';
import { Field, FormError } from '../../components/Field.js';
import { ErrorNote, LiveStatus, LoadError, Loading, PageHeader } from '../../components/states.js';
import { ApiReferenceLine } from '../../components/ApiReference.js';
import { Time } from '../../components/Time.js';
import { formatLocalTime, viewerZone } from '../../format.js';
import { useLoad } from '../../hooks.js';
import { Link, navigate } from '../../router.js';
import { useSession } from '../../session.js';
import { useAction } from '../../use-action.js';
import { DeliveryLog } from './DeliveryLog.js';
import { EndOverlap, openOverlapUntil } from './EndOverlap.js';
import { useEndpointFacts } from './endpoint-facts.js';
import { AttemptResult, EnabledState, EndpointFormDialog, EventsCell, SecretDialog } from './webhook-parts.js';
import { DisabledBanner, sayOnWebhooksList } from './Webhooks.js';
import { BusyButton } from '../../components/BusyButton.js';

type Open = 'edit' | 'delete' | 'roll' | 'recover' | null;

function RollSecretDialog({
  endpoint,
  onClose,
  onRolled,
  onStale,
}: {
  endpoint: Endpoint;
  onClose: () => void;
  onRolled: (rolled: RolledSecret) => void;
  /** The endpoint read again after a roll refused because another tab rolled meanwhile. */
  onStale: (current: Endpoint) => void;
}) {
  // A day by default, as Svix does: a roll clicked through must not break a live receiver
  // that has not been given the new secret yet; 0 is there for a secret that leaked.
  const [hours, setHours] = useState('24');
  // A roll during an open overlap is refused unless it ends that overlap on purpose
  // (docs/webhooks.md, "Rotating the signing secret"): the box is that purpose.
  const [endOverlap, setEndOverlap] = useState(false);
  const overlapUntil = openOverlapUntil(endpoint);
  // The server refuses a roll during an open overlap that does not end it (a 409 in its own,
  // engineer's words); the button waits for the box instead, so that refusal cannot happen.
  const mustTickEndOverlap = overlapUntil !== null && !endOverlap;
  /** A refusal of the overlap shows at its field, as in every form. */
  const roll = useAction({ fields: ['overlap_seconds'] });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    const overlap_seconds = Math.round(Number(hours) * 3600);
    const body = { overlap_seconds, ...(endOverlap && { end_overlap: true }) };
    void roll.run(
      async () => {
        try {
          onRolled(await api<RolledSecret>('POST', `/webhooks/${endpoint.id}/roll-secret`, { body }));
        } catch (failure) {
          if (!(failure instanceof ApiError) || failure.code !== 'overlap_open') throw failure;
          // This dialog did not know of that roll (another tab's): the endpoint is read again, so
          // the overlap's end and "End the overlap now" show, and the refusal is said in the
          // page's words rather than the engineer's.
          onStale(await api<Endpoint>('GET', `/webhooks/${endpoint.id}`));
          throw new Error(
            'The secret was rolled again after you opened this, and the secret it replaced is still accepted ' +
              '(below). Nothing was rolled: to roll now, tick "End the overlap now".',
          );
        }
      },
      { staysBusy: true },
    );
  };
  return (
    <Dialog title="Roll secret" onClose={onClose}>
      <form className="stack" onSubmit={submit}>
        <p>A new signing secret replaces the current one. During the overlap, each delivery is signed with both.</p>
        <Field
          label="Overlap (hours)"
          type="number"
          min={0}
          max={24}
          step="any"
          hint="0 to 24 hours: until then deliveries are signed with both secrets. 0 retires the current secret now (for a secret that leaked)."
          value={hours}
          action={roll}
          param="overlap_seconds"
          onChange={(event) => setHours(event.target.value)}
        />
        {overlapUntil && (
          <>
            <p className="notice">
              The previous secret is still accepted until <Time value={overlapUntil} />, so a new roll must end that
              now.
            </p>
            <label className="checkbox">
              <input
                type="checkbox"
                checked={endOverlap}
                onChange={(event) => {
                  // As a Field does: what the last submit said was about the form as it was.
                  roll.edited('end_overlap');
                  setEndOverlap(event.target.checked);
                }}
              />
              End the overlap now
            </label>
            <p className="hint">A receiver still using the previous secret then rejects deliveries.</p>
          </>
        )}
        <FormError action={roll} />
        <div className="dialog-actions">
          <button type="button" className="button" onClick={onClose}>
            Cancel
          </button>
          <BusyButton type="submit" className="button primary" busy={roll.busy} disabled={mustTickEndOverlap}>
            Roll secret
          </BusyButton>
        </div>
      </form>
    </Dialog>
  );
}

/** Which secrets deliveries carry after a roll, and until when, as the roll answered. */
function acceptedSecretsNote(rolled: RolledSecret): string {
  const replaced = rolled.accepted_secrets.find((accepted) => accepted.which === 'replaced');
  return replaced?.until
    ? `Deliveries are signed with this secret, until the next roll, and with the secret it replaced, ` +
        `until ${formatLocalTime(replaced.until)}.`
    : 'Deliveries are signed with this secret alone; the secrets before it are no longer accepted.';
}

/** Local date-time input value (no zone) for "now minus one day". */
function localInputValue(date: Date): string {
  const local = new Date(date.getTime() - date.getTimezoneOffset() * 60_000);
  return local.toISOString().slice(0, 16);
}

/** What Retry failed since… did: deliveries queued again, and those it left to their own retries. */
interface Recovered {
  requeued: number;
  retrying: number;
  since: string;
}

const deliveries = (count: number) => `${count} ${count === 1 ? 'delivery' : 'deliveries'}`;

/**
 * The outcome in words. Deliveries whose retries are still scheduled are not queued again (they
 * have not run out of attempts): said, with how to send one now, so that "0 queued" after a
 * run of failures does not read as if the button did nothing.
 */
function recoveredMessage({ requeued, retrying, since }: Recovered): string {
  const queued =
    requeued > 0
      ? `${deliveries(requeued)} queued to be sent again.`
      : `Nothing to send again: no delivery ran out of retries or was skipped since ${formatLocalTime(since)}.`;
  if (retrying === 0) return queued;
  const still = retrying === 1 ? '1 delivery that failed is' : `${retrying} deliveries that failed are`;
  return `${queued} ${still} still being retried on schedule; Resend in the log sends one now.`;
}

/**
 * What turning an endpoint on says (docs/webhooks.md, "While an endpoint is off"): it does not
 * send what was recorded while it was off, which is in the log as skipped, for Retry failed since….
 */
function turnedOnMessage(offSince: string | null): string {
  const since = offSince ? ` (since ${formatLocalTime(offSince)})` : '';
  return (
    `Turned on: new events are sent to it. Events recorded while it was off${since} are in the delivery log ` +
    `as skipped and are not sent by themselves; Retry failed since… ${offSince ? 'that time ' : ''}sends them.`
  );
}

function RecoverDialog({
  endpoint,
  from,
  onClose,
  onDone,
}: {
  endpoint: Endpoint;
  /** Where the time starts: when the endpoint was last turned off, if this page turned it on. */
  from: string | null;
  onClose: () => void;
  onDone: (outcome: Recovered) => void;
}) {
  const [since, setSince] = useState(localInputValue(from ? new Date(from) : new Date(Date.now() - 24 * 3600_000)));
  /** A refusal of the time (one in the future) shows at its field. */
  const recover = useAction({ fields: ['since'] });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    void recover.run(
      async () => {
        const iso = new Date(since).toISOString();
        const answer = await api<{ requeued: number; retrying: number }>('POST', `/webhooks/${endpoint.id}/recover`, {
          body: { since: iso },
        });
        onDone({ ...answer, since: iso });
      },
      { staysBusy: true },
    );
  };
  return (
    <Dialog title="Retry failed deliveries" onClose={onClose}>
      <form className="stack" onSubmit={submit}>
        <p>
          Every failed or skipped delivery to this endpoint since this time is sent once more, events recorded while it
          was off included.
        </p>
        <Field
          label={`Since (${viewerZone()} time)`}
          type="datetime-local"
          required
          value={since}
          action={recover}
          param="since"
          onChange={(event) => setSince(event.target.value)}
        />
        <FormError action={recover} />
        <div className="dialog-actions">
          <button type="button" className="button" onClick={onClose}>
            Cancel
          </button>
          <BusyButton type="submit" className="button primary" busy={recover.busy}>
            Retry failed
          </BusyButton>
        </div>
      </form>
    </Dialog>
  );
}

/**
 * After a roll with an overlap, the secret it replaced still signs until a time: said among the
 * facts, for every role that may read the endpoint, where only the rotation dialogs said it (a
 * member, who has none, could not know why a receiver still accepted the old secret). On a row of
 * its own, as the URL, so the five facts above keep their full rows; none when no overlap is open.
 */
function SecretOverlapFact({ endpoint }: { endpoint: Endpoint }) {
  const until = openOverlapUntil(endpoint);
  if (!until) return null;
  return (
    <div className="whole-row">
      <dt>Signing secret</dt>
      <dd>
        Previous secret valid until <Time value={until} sayUtc />: until then each delivery is signed with both the
        current and the previous secret.
      </dd>
    </div>
  );
}

export default function EndpointPage({ id }: { id: string }) {
  const { me } = useSession();
  const canManage = me.permissions.manage_webhooks;
  const loaded = useLoad((signal) => api<Endpoint>('GET', `/webhooks/${encodeURIComponent(id)}`, { signal }), id);
  const [open, setOpen] = useState<Open>(null);
  const [secret, setSecret] = useState<{ value: string; note?: string } | null>(null);
  const [test, setTest] = useState<Attempt | null>(null);
  const testing = useAction();
  /** Delete's, whose refusal shows in its confirmation (ConfirmDialog), never on the page. */
  const removal = useAction();
  /** What the last action did; cleared when another starts, whose result it may no longer describe. */
  const [message, setMessage] = useState<string | null>(null);
  const [logRound, setLogRound] = useState(0);
  /** When the endpoint was off from, once this page has turned it on: Retry failed since… starts there. */
  const [offSince, setOffSince] = useState<string | null>(null);
  /** Where the focus goes once End overlap now, which then disappears, has done its work. */
  const [rollButton, setRollButton] = useState<HTMLButtonElement | null>(null);
  const facts = useEndpointFacts(id, loaded.set, () => setLogRound((value) => value + 1));

  if (loaded.loading && !loaded.data) return <Loading />;
  if (!loaded.data) {
    // Named as the other detail pages that could not load theirs ("Campaign", "Customer"): an
    // h1, so the tab's title says which page this is, where it was the workspace's name alone.
    return (
      <>
        <nav className="breadcrumb" aria-label="Breadcrumb">
          <Link to="/settings/webhooks">Outbound webhooks</Link>
        </nav>
        <PageHeader title="Webhook endpoint" />
        <LoadError
          loaded={loaded}
          what="webhook endpoint"
          back={{ to: '/settings/webhooks', label: 'All endpoints' }}
        />
      </>
    );
  }
  const endpoint = loaded.data;
  /** The switch's and the banner's answer; turned on, the page says what happens to what it missed. */
  const changed = (next: Endpoint) => {
    if (!endpoint.enabled && next.enabled) {
      setMessage(turnedOnMessage(endpoint.disabled_at));
      setOffSince(endpoint.disabled_at);
    } else if (!next.enabled) {
      setMessage(null);
    }
    loaded.set(next);
  };

  const sendTest = () => {
    setMessage(null);
    void testing.run(async () => {
      setTest(await api<Attempt>('POST', `/webhooks/${endpoint.id}/test`));
      setLogRound((value) => value + 1);
    });
  };

  // Refused (deleted meanwhile in another tab, say), the confirmation stays open with the reason.
  const remove = () => {
    testing.clear();
    setMessage(null);
    void removal.run(
      async () => {
        await api('DELETE', `/webhooks/${endpoint.id}`);
        // Said on the list this page is left for, where the endpoint is then simply missing.
        sayOnWebhooksList(`${endpoint.name} was deleted: no more events are sent to it.`);
        navigate('/settings/webhooks');
      },
      { staysBusy: true },
    );
  };

  return (
    <>
      <nav className="breadcrumb" aria-label="Breadcrumb">
        <Link to="/settings/webhooks">Outbound webhooks</Link> / <span aria-current="page">{endpoint.name}</span>
      </nav>
      <PageHeader title={endpoint.name}>
        {canManage && (
          <>
            <BusyButton type="button" className="button" onClick={sendTest} busy={testing.busy}>
              {testing.busy ? 'Sending…' : 'Send test'}
            </BusyButton>
            <button type="button" className="button" onClick={() => setOpen('edit')}>
              Edit
            </button>
            <button type="button" className="button" ref={setRollButton} onClick={() => setOpen('roll')}>
              Roll secret
            </button>
            <EndOverlap
              endpoint={endpoint}
              {...(rollButton && { returnFocusTo: rollButton })}
              onEnded={(ended, result) => {
                setMessage(result);
                // Its answer says what GET would (no overlap any more), as a roll's does.
                loaded.set({ ...endpoint, previous_secret_expires_at: ended.previous_secret_expires_at });
              }}
            />
            <button type="button" className="button" onClick={() => setOpen('recover')}>
              Retry failed since…
            </button>
            <button type="button" className="button danger-outline" onClick={() => setOpen('delete')}>
              Delete
            </button>
          </>
        )}
      </PageHeader>
      <DisabledBanner endpoint={endpoint} canManage={canManage} onChange={changed} />
      {testing.error && <ErrorNote message={testing.error} />}
      <LiveStatus>{message}</LiveStatus>
      <AttemptResult
        attempt={test}
        label="Test delivery:"
        note="A test does not count toward the endpoint's failures or its last delivery success, and never turns it off."
      />
      {/* Its URL on a row of its own, then five facts in columns chosen by the card's width so that
          every row is full (styles.css, "An endpoint's summary"), then an open overlap on a row of its own. */}
      <div className="card endpoint-summary">
        <dl className="details">
          <div className="whole-row">
            <dt>URL</dt>
            <dd className="url-cell">
              <BreakableUrl url={endpoint.url} />
            </dd>
          </div>
          <div className="summary-events">
            <dt>Events</dt>
            <dd>
              <EventsCell events={endpoint.events} />
            </dd>
          </div>
          <div>
            {/* Not "Enabled": that is the switch's own name (or, read-only, the state's word), which a
                screen reader read twice. */}
            <dt>Deliveries</dt>
            <dd>
              <EnabledState endpoint={endpoint} canManage={canManage} onChange={changed} />
            </dd>
          </div>
          <div>
            <dt>Consecutive failures</dt>
            <dd>{endpoint.failure_count}</dd>
          </div>
          <div>
            <dt>Last delivery success</dt>
            <dd>
              <Time value={endpoint.last_success_at} empty="Never" sayUtc />
            </dd>
          </div>
          <div>
            <dt>Last delivery failure</dt>
            <dd>
              <Time value={endpoint.last_failure_at} empty="Never" sayUtc />
            </dd>
          </div>
          <SecretOverlapFact endpoint={endpoint} />
        </dl>
        {/* Send test's pings are in the log, not in these facts: a ping that succeeds says nothing
            of the events, and "Last success: Never" beside its Succeeded entry read as a contradiction. */}
        <p className="hint">Deliveries of events only: test pings show in the log below but are not counted here.</p>
      </div>
      <ApiReferenceLine about="Verifying signatures, retries and each event's fields" section="webhooks" />
      <DeliveryLog
        endpointId={endpoint.id}
        endpointUrl={endpoint.url}
        eventTypes={me.event_types}
        canResend={canManage}
        round={logRound}
        onRead={facts.refresh}
      />
      {open === 'edit' && (
        <EndpointFormDialog
          endpoint={endpoint}
          eventTypes={me.event_types}
          onClose={() => setOpen(null)}
          onSaved={(saved) => {
            setOpen(null);
            // Said as Workspace's Save is: the dialog closes on a page that otherwise looks the same.
            setMessage('Endpoint saved.');
            loaded.set(saved);
          }}
          onStale={(current) => loaded.set(current)}
        />
      )}
      {open === 'roll' && (
        <RollSecretDialog
          endpoint={endpoint}
          onClose={() => setOpen(null)}
          onStale={(current) => loaded.set(current)}
          onRolled={(rolled) => {
            setOpen(null);
            // "Overlap ended: … the current secret alone" is no longer true after a roll with an overlap.
            setMessage(null);
            setSecret({ value: rolled.secret, note: acceptedSecretsNote(rolled) });
            // Of what the page shows, a roll changes only until when the replaced secret is
            // accepted, which its answer says (as GET would): the page then knows of the new
            // overlap (the dialog's next roll offers to end it) without asking again.
            loaded.set({ ...endpoint, previous_secret_expires_at: rolled.previous_secret_expires_at });
          }}
        />
      )}
      {open === 'recover' && (
        <RecoverDialog
          endpoint={endpoint}
          from={offSince}
          onClose={() => setOpen(null)}
          onDone={(outcome) => {
            setOpen(null);
            setMessage(recoveredMessage(outcome));
            setLogRound((value) => value + 1);
            // The facts with the log, and again once the worker has sent what was queued.
            if (outcome.requeued > 0) facts.follow(endpoint);
            else facts.refresh();
          }}
        />
      )}
      {open === 'delete' && (
        <ConfirmDialog
          title="Delete endpoint"
          message={
            <p>
              Delete <strong>{endpoint.name}</strong>? No more events are sent to it. This cannot be undone.
            </p>
          }
          confirmLabel="Delete"
          action={removal}
          onConfirm={remove}
          onClose={() => setOpen(null)}
        />
      )}
      {secret && (
        <SecretDialog
          title="New signing secret"
          secret={secret.value}
          {...(secret.note && { note: secret.note })}
          onClose={() => setSecret(null)}
        />
      )}
    </>
  );
}
