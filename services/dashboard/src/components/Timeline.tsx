import type { ReactNode } from 'react';
import type { TimelineEntry, User } from '../api/types.js';
import { ActorName } from './ActorName.js';
import { BreakableUrl } from './BreakableUrl.js';
import { errorBesideStatus } from '../format.js';
import { attemptOutcomeLabel, campaignActionLabel, declineCodeLabel, deliveryStatusLabel } from '../labels.js';
import { Link } from '../router.js';
import { EventTypeName } from './Labels.js';
import { Badge } from './ListPage.js';
import { Time } from './Time.js';
import { useRefreshWhile } from '../use-refresh-while.js';

/**
 * How long after an event a page keeps reading the campaign again for it: the worker's dispatcher
 * takes it a moment after it is recorded and its first attempt follows; a worker that is down, or
 * an endpoint that is, is not waited for forever.
 */
const REFRESH_WINDOW_MS = 2 * 60_000;
/** How often a page with an event on its way reads the campaign again, until its deliveries settle. */
const REFRESH_WHILE_SENDING_MS = 2_000;

type EventEntry = Extract<TimelineEntry, { kind: 'event' }>;
type Delivery = EventEntry['deliveries'][number];

const NO_MEMBERS: ReadonlyMap<string, User> = new Map();

/**
 * On its way: still in the outbox, and to be sent (docs/dashboard-api.md, "Campaigns"). It used to
 * be "no delivery yet, recorded under two minutes ago", which said "being sent" of an event the
 * dispatcher would drop because the payment processor was not connected.
 */
function isBeingSent(entry: EventEntry): boolean {
  return entry.queued && entry.not_sent_reason === null;
}

/**
 * Still to be settled, recently: in the outbox, or made and with a delivery not yet settled
 * (pending: its first attempt in flight, or a retry due). A delivery whose endpoint stays down
 * keeps retrying for hours; past the window the page stops asking, and a reload shows the rest.
 */
function isOnItsWay(entry: EventEntry, now: number): boolean {
  if (now - Date.parse(entry.at) >= REFRESH_WINDOW_MS) return false;
  return isBeingSent(entry) || entry.deliveries.some((delivery) => delivery.status === 'pending');
}

/**
 * Reads the campaign (or cancel session) again every couple of seconds while one of its events is on its way,
 * so "being sent" turns into the deliveries and a pending delivery into its outcome (or, past
 * the window, into why there are none) without the viewer reloading. It used to stop at the
 * first sight of a delivery, which a first attempt still in flight left "pending" for good. Not
 * while the page is hidden, and at once when it is shown again, as the Processor page's import.
 */
export function useRefreshWhileSending(entries: TimelineEntry[] | undefined, reload: () => void): void {
  const now = Date.now();
  const sending = (entries ?? []).some((entry) => entry.kind === 'event' && isOnItsWay(entry, now));
  useRefreshWhile(sending, entries, reload, REFRESH_WHILE_SENDING_MS);
}

/**
 * A campaign's or cancel session's events, each with its deliveries per endpoint, and (a
 * campaign's) the payment attempts the processor reported failed and the actions taken by hand,
 * whose actors `members` names. In the API's order: oldest first, and an action before the event
 * it recorded at the same time (the cause, then its effect), as a failed attempt before the
 * opening it caused. `next`: what comes next, after the last entry (a campaign in flight: the
 * processor's next retry).
 */
export function Timeline({
  entries,
  members = NO_MEMBERS,
  empty,
  next,
}: {
  entries: TimelineEntry[];
  members?: ReadonlyMap<string, User>;
  /** What the page says when there is no entry, and why (each page knows its own reasons). */
  empty: ReactNode;
  next?: ReactNode;
}) {
  if (entries.length === 0 && !next) return <p className="muted">{empty}</p>;
  return (
    <>
      {entries.length === 0 && <p className="muted">{empty}</p>}
      <ol className="timeline">
        {entries.map((entry) => {
          switch (entry.kind) {
            case 'event':
              return (
                <li key={entry.event_id}>
                  <Time value={entry.at} /> <EventTypeName type={entry.type} />
                  {entry.source && <> (from the {entry.source})</>}
                  <Deliveries entry={entry} />
                </li>
              );
            case 'payment_attempt':
              return (
                <li key={`attempt:${entry.attempt_number}`}>
                  <Time value={entry.at} /> <FailedAttempt entry={entry} />
                </li>
              );
            case 'action':
              return (
                <li key={`${entry.action}:${entry.at}`}>
                  <Time value={entry.at} /> <strong>{campaignActionLabel(entry.action)}</strong> by{' '}
                  <ActorName actor={entry.actor} members={members} inline />
                </li>
              );
          }
        })}
        {next && <li className="timeline-next">{next}</li>}
      </ol>
    </>
  );
}

/**
 * "Payment attempt 2 failed: Insufficient funds (insufficient_funds)": the processor's number of
 * the attempt, its decline in words and its code; a decline the processor did not say (no API
 * key) is said so rather than "Unknown (unknown)".
 */
function FailedAttempt({ entry }: { entry: Extract<TimelineEntry, { kind: 'payment_attempt' }> }) {
  const label = <strong>Payment attempt {entry.attempt_number} failed</strong>;
  if (entry.decline_code === 'unknown') return <>{label} (the decline code is not known)</>;
  return (
    <>
      {label}: {declineCodeLabel(entry.decline_code)} (<code>{entry.decline_code}</code>)
    </>
  );
}

function Deliveries({ entry }: { entry: EventEntry }) {
  if (entry.not_sent_reason === 'processor_not_connected') {
    return (
      <p className="muted">
        Not sent: the payment processor was not connected and syncing when this happened, so outbound webhooks were
        paused. It will not be sent later.
      </p>
    );
  }
  if (isBeingSent(entry)) {
    return (
      <p className="muted" role="status">
        Being sent to the endpoints subscribed to it; this page updates by itself when the deliveries are made.
      </p>
    );
  }
  if (entry.deliveries.length === 0) {
    return (
      <p className="muted">
        No delivery on record: no endpoint was subscribed to it then, or the webhook log no longer keeps it.
      </p>
    );
  }
  return (
    <ul>
      {entry.deliveries.map((delivery) =>
        delivery.status === 'skipped' ? (
          <SkippedDelivery key={delivery.id} delivery={delivery} />
        ) : (
          <li key={delivery.id}>
            Sent to <Link to={`/settings/webhooks/${delivery.endpoint_id}`}>{delivery.endpoint_name}</Link>:{' '}
            <DeliveryOutcome delivery={delivery} />, {delivery.attempts_sent}{' '}
            {delivery.attempts_sent === 1 ? 'attempt' : 'attempts'}
            <DeliveryTime delivery={delivery} />
            <SentToUrl delivery={delivery} />
          </li>
        ),
      )}
    </ul>
  );
}

/**
 * What became of the delivery, as the delivery log says it of an attempt: its last attempt's
 * outcome, HTTP status and error. A pending delivery whose last attempt failed (a receiver that
 * refused the connection, say) reads "Failed (connection refused)" before its next attempt's time:
 * "pending" alone read as if nothing had been tried. Pending with no attempt made yet (or one in
 * flight, or queued again after a skip) stays "Pending" (each in words, labels.ts).
 */
function DeliveryOutcome({ delivery }: { delivery: Delivery }) {
  const wentWrong =
    delivery.last_outcome === 'failed' || delivery.last_outcome === 'interrupted' ? delivery.last_outcome : null;
  // A failed or interrupted attempt is named as the delivery log names it.
  const shown = delivery.status === 'pending' && wentWrong ? wentWrong : delivery.status;
  const label = shown === wentWrong ? attemptOutcomeLabel(shown) : deliveryStatusLabel(shown);
  const error = wentWrong ? errorBesideStatus(delivery.last_error, delivery.last_http_status) : null;
  return (
    <>
      <Badge value={shown} label={label} />
      {delivery.last_http_status !== null && <> HTTP {delivery.last_http_status}</>}
      {error && <> ({error})</>}
    </>
  );
}

/** The word before each status's time: completed (`completed_at`), or, pending, the next attempt. */
const WHEN: Record<string, string> = {
  succeeded: 'delivered',
  failed: 'gave up',
  skipped: 'skipped',
};

/**
 * When the delivery was settled, with the page's own Time (the viewer's zone, UTC on hover): the
 * first thing a support agent asks of "Sent to …: succeeded". A pending one says when its next
 * attempt is due (for one in flight, when it was due).
 */
function DeliveryTime({ delivery }: { delivery: Delivery }) {
  if (delivery.status === 'pending') {
    return delivery.next_attempt_at ? (
      <>
        , next attempt due <Time value={delivery.next_attempt_at} />
      </>
    ) : null;
  }
  if (!delivery.completed_at) return null;
  return (
    <>
      , {WHEN[delivery.status] ?? 'completed'} <Time value={delivery.completed_at} />
    </>
  );
}

/**
 * A skipped delivery: never delivered, and why (its skipped log line: the endpoint was off when
 * the event was recorded, was turned off before its retry, …). The skip takes an attempt number
 * of its own (docs/decisions.md), which `attempts_sent` leaves out.
 */
function SkippedDelivery({ delivery }: { delivery: Delivery }) {
  const sent = delivery.attempts_sent;
  return (
    <li>
      Not delivered to <Link to={`/settings/webhooks/${delivery.endpoint_id}`}>{delivery.endpoint_name}</Link>:{' '}
      <Badge value="skipped" label={deliveryStatusLabel('skipped')} />
      {delivery.skipped_reason && <> ({delivery.skipped_reason})</>};{' '}
      {sent === 0 ? 'no attempt sent' : `${sent} ${sent === 1 ? 'attempt' : 'attempts'} sent before`}
      <DeliveryTime delivery={delivery} />
      <SentToUrl delivery={delivery} />
    </li>
  );
}

/**
 * Where its last attempt went (or, skipped, would have), when the endpoint's URL has been edited
 * since (null otherwise): the link names the endpoint as it is now, which is not where this event
 * went. "Then at", as the line already begins "Sent to" its endpoint.
 */
function SentToUrl({ delivery }: { delivery: Delivery }) {
  if (!delivery.sent_to_url) return null;
  return (
    <span className="muted url-cell">
      {' '}
      (then at <BreakableUrl url={delivery.sent_to_url} />)
    </span>
  );
}
