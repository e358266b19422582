import { useId, useState } from 'react';
import { IdCode } from '../../components/IdCode.js';
import { api } from '../../api/client.js';
import { BusyButton } from '../../components/BusyButton.js';
import { Clipped, DataTable, type Column } from '../../components/ListPage.js';
import { Time } from '../../components/Time.js';
import { ErrorNote, LiveStatus } from '../../components/states.js';
import { formatNumber } from '../../format.js';
import { useAction } from '../../use-action.js';

/** `latest_event_error` of GET /processor (docs/processor.md, "Poison events"). */
interface LatestEventError {
  psp_event_id: string;
  type: string;
  state: 'waiting' | 'parked';
  attempts: number;
  error: string;
  next_attempt_at: string | null;
}

interface ParkedEvent {
  id: string;
  psp_event_id: string;
  type: string;
  received_at: string;
  last_error: string | null;
}

/** What GET /processor says of the events it could not apply yet. */
export interface EventsView {
  events_pending: number;
  events_parked: number;
  parked_events: ParkedEvent[];
  latest_event_error: LatestEventError | null;
}

const PARKED_COLUMNS: Column<ParkedEvent>[] = [
  { header: 'Stripe event', cell: (parked) => <code>{parked.psp_event_id}</code> },
  { header: 'Type', cell: (parked) => <code>{parked.type}</code> },
  { header: 'Received', cell: (parked) => <Time value={parked.received_at} short withTime /> },
  { header: 'Error', cell: (parked) => <Clipped className="long-text" text={parked.last_error} />, fill: true },
];

/**
 * A Retry in each row, as the CLI's `processor retry --event`: once one cause is fixed (a
 * permission for invoices, say), the events it parked are retried without retrying those still
 * waiting on another fix, which would only park again. Named by its event for a screen reader.
 */
const retryColumn = (busy: boolean, retry: (eventId: string) => void): Column<ParkedEvent> => ({
  header: 'Actions',
  actions: true,
  cell: (parked) => (
    <button type="button" className="button small" disabled={busy} onClick={() => retry(parked.psp_event_id)}>
      Retry<span className="visually-hidden"> {parked.psp_event_id}</span>
    </button>
  ),
});

const events = (count: number) => `${formatNumber(count)} parked ${count === 1 ? 'event' : 'events'}`;

/**
 * The events of the connection that failed: the newest error among those waiting for another
 * attempt or parked, in words (a permission the key lacks was seen only in the worker's log, or
 * by reading the parked list's clipped cells), and the parked events with Retry parked events
 * for those who may (`canRetry`: POST /processor/retry's permission). A retry's answer is the
 * status (`onRetried`); a refusal (nothing parked any more: the CLI or Stripe's resend retried
 * them meanwhile) is said in the server's words and the status read again (`reload`), so the
 * page stops offering what is gone.
 */
export function EventErrors<Status extends EventsView>({
  status,
  canRetry,
  onRetried,
  reload,
}: {
  status: Status;
  canRetry: boolean;
  onRetried: (next: Status) => void;
  reload: () => void;
}) {
  const id = useId();
  const retry = useAction();
  const [requeued, setRequeued] = useState<number | null>(null);
  const latest = status.latest_event_error;

  /** Every parked event, or the one named. */
  const retryParked = async (eventId?: string) => {
    setRequeued(null);
    const done = await retry.run(async () => {
      const { retried: ids, ...next } = await api<Status & { retried: string[] }>('POST', '/processor/retry', {
        body: eventId === undefined ? {} : { event_id: eventId },
      });
      onRetried(next as unknown as Status);
      setRequeued(ids.length);
    });
    if (!done) reload();
  };

  return (
    <>
      {latest && (
        <section className="card stack narrow" aria-labelledby={`${id}-latest`}>
          <h2 id={`${id}-latest`}>Latest event error</h2>
          <p className="hint">
            The newest error among the events waiting for another attempt or parked (
            {formatNumber(status.events_pending)} waiting, {formatNumber(status.events_parked)} parked).
          </p>
          <dl className="details">
            <dt>Stripe event</dt>
            <dd>
              <IdCode id={latest.psp_event_id} />
            </dd>
            <dt>Type</dt>
            <dd>
              <code>{latest.type}</code>
            </dd>
            <dt>State</dt>
            <dd>
              {latest.state === 'waiting' ? (
                <>
                  Waiting: tried again by itself at <Time value={latest.next_attempt_at} seconds />
                </>
              ) : (
                'Parked: not tried again until it is retried'
              )}
            </dd>
            <dt>Attempts</dt>
            <dd>{formatNumber(latest.attempts)}</dd>
            <dt className="whole-row">Error</dt>
            <dd className="whole-row">{latest.error}</dd>
          </dl>
        </section>
      )}
      {status.events_parked > 0 && (
        // Not a region of its own: its table is one, of the same name.
        <div className="stack">
          <h2>Events that could not be applied</h2>
          <p className="hint narrow">
            {events(status.events_parked)}: no more attempts are made. Once the cause is fixed (a permission given to
            the key in Stripe, for one), retrying gives each a new round of attempts.
          </p>
          {canRetry && (
            <div>
              <BusyButton type="button" className="button" busy={retry.busy} onClick={() => void retryParked()}>
                Retry parked events
              </BusyButton>
            </div>
          )}
          {status.parked_events.length > 0 && (
            <DataTable
              caption="Events that could not be applied"
              columns={
                canRetry
                  ? [...PARKED_COLUMNS, retryColumn(retry.busy, (eventId) => void retryParked(eventId))]
                  : PARKED_COLUMNS
              }
              rows={status.parked_events}
            />
          )}
        </div>
      )}
      {/* Outside the parked section, which a retry empties: the outcome stays in sight, as wide as the cards. */}
      <div className="narrow">
        {retry.error && <ErrorNote message={retry.error} />}
        <LiveStatus>
          {requeued !== null &&
            `${events(requeued)} requeued: ${requeued === 1 ? 'it is' : 'they are'} tried again in a moment, and this page shows how it goes.`}
        </LiveStatus>
      </div>
    </>
  );
}
