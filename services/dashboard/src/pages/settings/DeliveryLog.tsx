import { useRef, useState, type ReactNode } from 'react';
import { api, query } from '../../api/client.js';
import type { Attempt, List } from '../../api/types.js';
import { BreakableUrl } from '../../components/BreakableUrl.js';
import { EventTypeWithCode } from '../../components/Labels.js';
import { Badge, Filter, showsNothing, useFocusNewRows } from '../../components/ListPage.js';
import { ErrorNote, Loading } from '../../components/states.js';
import {
  EmptyList,
  oneOf,
  UnknownFilters,
  useFilterState,
  useReportRefusal,
  type FilterState,
} from '../../components/FilterStates.js';
import { Time } from '../../components/Time.js';
import { usePaged, type Paged } from '../../hooks.js';
import { useFilters } from '../../router.js';
import { useAction } from '../../use-action.js';
import { AttemptResult } from './webhook-parts.js';
import { attemptOutcomeLabel, eventTypeLabel } from '../../labels.js';
import { BusyButton } from '../../components/BusyButton.js';

const OUTCOMES = ['succeeded', 'failed', 'skipped', 'interrupted'] as const;
/**
 * The log's filters in the endpoint page's address, prefixed: the page may keep other things
 * there one day, and a bare `outcome` or `event_type` would read as the endpoint's own.
 */
const FILTERS = ['log_outcome', 'log_event_type'] as const;

/**
 * What followed an attempt, as it stands when the details are opened: its delivery's next
 * attempt, this one's number + 1. The API's `retried_at` is when that attempt was made, whatever
 * made it: the worker (the scheduled retry, or the delivery queued again by Retry failed since…)
 * or a Resend; null while none is (a skipped retry is no attempt). The API cannot tell which made
 * it (an attempt records no maker), so the log says "made", never "retry" or "resend". So:
 * made, with its time and number, even where no retry was due (a Resend of a delivery given up,
 * or one made before its retry's time); else `next_attempt_at`, the time the attempt was given
 * for its retry, kept on the row for good: none, a time to come, or a past one not made yet (the
 * worker late or down, or the attempt in flight). A past time shown as to come made an old failure
 * read as if its retry were still to come. The log's own rows cannot say it: a filter hides the
 * next attempt (Outcome: failed, a retry that succeeded), and one hidden read the same as one
 * not made.
 */
function NextAttempt({ entry }: { entry: Attempt }) {
  let fact: ReactNode;
  if (entry.retried_at) {
    fact = (
      <>
        Made <Time value={entry.retried_at} sayUtc /> (attempt {entry.attempt + 1})
      </>
    );
  } else if (entry.next_attempt_at === null || Date.parse(entry.next_attempt_at) > Date.now()) {
    fact = <Time value={entry.next_attempt_at} empty="None" sayUtc />;
  } else {
    fact = (
      <>
        Was due <Time value={entry.next_attempt_at} sayUtc />, not made yet
      </>
    );
  }
  return (
    <div>
      <dt>Next attempt</dt>
      <dd>{fact}</dd>
    </div>
  );
}

/**
 * The URL an attempt went to, under its summary, only when it is not the endpoint's URL now
 * (edited since): the log never shows an old attempt as if it had gone to the new URL. Nothing
 * when it was not recorded (a line logged before migration 0033): there is nothing to say.
 */
function SentTo({ url, current }: { url: string | null; current: string }) {
  if (url === null || url === current) return null;
  return (
    <p className="log-sent-to muted url-cell">
      Sent to <BreakableUrl url={url} />
    </p>
  );
}

function Entry({
  entry,
  endpointUrl,
  canResend,
  onResent,
}: {
  entry: Attempt;
  endpointUrl: string;
  canResend: boolean;
  /** The attempt a Resend made, from its answer. */
  onResent: (made: Attempt) => void;
}) {
  const [expanded, setExpanded] = useState(false);
  const [resent, setResent] = useState<Attempt | null>(null);
  const resending = useAction();
  const detailsId = `entry-${entry.id}`;

  const resend = () =>
    void resending.run(async () => {
      const made = await api<Attempt>('POST', `/deliveries/${entry.delivery_id}/resend`);
      setResent(made);
      onResent(made);
    });

  return (
    <li className="log-entry">
      <button
        type="button"
        className="log-summary"
        aria-expanded={expanded}
        aria-controls={detailsId}
        onClick={() => setExpanded((value) => !value)}
      >
        <Badge value={entry.outcome} label={attemptOutcomeLabel(entry.outcome)} />
        {/* Its words, and its code on a quieter line under them, as the receiver gets it. */}
        <span className="log-event">
          <EventTypeWithCode type={entry.event_type} />
        </span>
        <span>{entry.http_status ?? '—'}</span>
        <span className="muted">attempt {entry.attempt}</span>
        <span className="log-time">
          <Time value={entry.attempted_at} />
        </span>
      </button>
      <SentTo url={entry.url} current={endpointUrl} />
      {expanded && (
        <div className="log-details" id={detailsId}>
          <dl className="details">
            <div>
              <dt>Status</dt>
              <dd>{entry.http_status ?? 'No HTTP status'}</dd>
            </div>
            <div>
              <dt>Duration</dt>
              <dd>{entry.duration_ms} ms</dd>
            </div>
            <div>
              <dt>Attempt</dt>
              <dd>{entry.attempt}</dd>
            </div>
            <NextAttempt entry={entry} />
            <div>
              <dt>Error</dt>
              <dd>{entry.error ?? 'None'}</dd>
            </div>
          </dl>
          {/* What was sent and answered, in a code block; where there is nothing to show, a plain
              note says why, not words in the code block's dress that read as the payload. */}
          <h3>Request body</h3>
          {entry.request_body ? (
            <pre className="code-block">{prettyJson(entry.request_body)}</pre>
          ) : (
            <p className="log-note">Not kept for a test ping.</p>
          )}
          <h3>Response (first 4 KB)</h3>
          {entry.response_body ? (
            <pre className="code-block">{entry.response_body}</pre>
          ) : (
            <p className="log-note">
              {entry.http_status === null
                ? 'No response: the request got no answer.'
                : 'The response had an empty body.'}
            </p>
          )}
          {canResend && entry.event_id && (
            <BusyButton type="button" className="button" onClick={resend} busy={resending.busy}>
              Resend
            </BusyButton>
          )}
          <AttemptResult attempt={resent} label="Resent:" />
          {resending.error && <ErrorNote message={resending.error} />}
        </div>
      )}
    </li>
  );
}

/**
 * The log after a Resend, from the attempt its answer holds (`resent`, the entry resent): the
 * attempt at the top when the filters would show it (its event type is the entry's; a Resend that
 * succeeded is not among failed attempts), with the entry's request body (one delivery's attempts
 * all sign the same JSON) and no next attempt made yet; and the attempt before it, when shown,
 * made (`retried_at`), as the API would now say. Nothing else is read: the rows shown stay, and
 * so does Load more's cursor, the oldest row read.
 */
function withResent(
  items: Attempt[],
  made: Attempt,
  resent: Attempt,
  filters: { outcome: string; eventType: string },
): Attempt[] {
  const rows = items.map((row) =>
    row.delivery_id === made.delivery_id && row.attempt === made.attempt - 1
      ? { ...row, retried_at: made.attempted_at }
      : row,
  );
  const hidden =
    (filters.outcome !== '' && made.outcome !== filters.outcome) ||
    (filters.eventType !== '' && made.event_type !== filters.eventType);
  if (hidden || rows.some((row) => row.id === made.id)) return rows;
  return [{ ...made, request_body: resent.request_body, retried_at: null }, ...rows];
}

/** What the log has for each filter (FilterStates): the API's outcomes, and the types it offers. */
function filterChecks(types: readonly string[]) {
  return {
    log_outcome: { says: 'outcome', knows: oneOf(OUTCOMES), apiName: 'outcome' },
    log_event_type: { says: 'event type', knows: oneOf(types), apiName: 'event_type' },
  };
}

function prettyJson(text: string): string {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}

/**
 * The log's loading, error and empty states. A filter value the server refused is not an error to
 * try again: the page says it (UnknownFilters). Filters that match nothing offer Clear filters.
 */
function LogState({ list, state }: { list: Paged<Attempt>; state: FilterState }) {
  if (list.loading && list.items.length === 0) return <Loading />;
  if (list.error && !state.isAboutFilter(list.refusal)) return <ErrorNote message={list.error} onRetry={list.reload} />;
  // Never while a new key's first page is on its way (usePaged: loading, no rows), so not between
  // Clear filters and the whole log.
  if (!showsNothing(list)) return null;
  return (
    <EmptyList state={state}>{state.anySet ? 'No deliveries match these filters.' : 'No deliveries yet.'}</EmptyList>
  );
}

export function DeliveryLog({
  endpointId,
  endpointUrl,
  eventTypes,
  canResend,
  round,
  onRead,
}: {
  endpointId: string;
  /** The endpoint's URL now: an attempt sent elsewhere says where. */
  endpointUrl: string;
  eventTypes: string[];
  canResend: boolean;
  round: number;
  /**
   * The log was read again (Refresh) or a Resend made an attempt: the endpoint's facts beside it
   * are read again too, so that they never tell an older story than the log.
   */
  onRead: () => void;
}) {
  const types = [...eventTypes, 'ping'];
  const [filters, setFilters] = useFilters(FILTERS);
  const state = useFilterState(filters, setFilters, filterChecks(types), 'log');
  // A value the log does not have (an address edited by hand) is said in place of the log, and
  // the server is not asked (no key). It filtered nothing once: the whole log, under an address
  // asking for part of it.
  const unknown = state.unknown.length > 0;
  const { log_outcome: outcome, log_event_type: eventType } = filters;
  const list = usePaged(
    (cursor) =>
      api<List<Attempt>>(
        'GET',
        `/webhooks/${endpointId}/deliveries${query({ outcome, event_type: eventType, cursor })}`,
      ),
    unknown ? null : `${endpointId}:${outcome}:${eventType}:${round}`,
  );
  useReportRefusal(list, state);
  const logRef = useRef<HTMLUListElement>(null);
  const loadMore = useFocusNewRows(list, logRef, { rows: ':scope > li', control: 'button' });
  return (
    <section className="card" aria-labelledby="delivery-log-title">
      <div className="section-head">
        <h2 id="delivery-log-title">Delivery log</h2>
        <div className="filters" ref={state.rowRef}>
          <Filter
            label="Outcome"
            value={outcome}
            options={OUTCOMES}
            optionLabel={attemptOutcomeLabel}
            onChange={(value) => setFilters({ log_outcome: value })}
            problemId={state.fieldProblem('log_outcome')}
          />
          {/* Event types are names (`trial.reminder_sent`), shown as the log and the API write them. */}
          <Filter
            label="Event type"
            value={eventType}
            options={types}
            optionLabel={eventTypeLabel}
            onChange={(value) => setFilters({ log_event_type: value })}
            problemId={state.fieldProblem('log_event_type')}
          />
          <button
            type="button"
            className="button small"
            onClick={() => {
              list.reload();
              onRead();
            }}
          >
            Refresh
          </button>
        </div>
      </div>
      {unknown ? <UnknownFilters state={state} /> : <LogState list={list} state={state} />}
      {list.items.length > 0 && (
        <ul className="log" aria-label="Deliveries, newest first" ref={logRef}>
          {list.items.map((entry) => (
            <Entry
              key={entry.id}
              entry={entry}
              endpointUrl={endpointUrl}
              canResend={canResend}
              onResent={(made) => {
                // The resend's attempt appears at the top without a Refresh, from the Resend's
                // answer; the entry resent stays open, with its result and the focus on Resend.
                // Every row shown stays, and Load more goes on from the oldest.
                list.change((items) => withResent(items, made, entry, { outcome, eventType }));
                onRead();
              }}
            />
          ))}
        </ul>
      )}
      {list.hasMore && (
        <div className="load-more">
          <BusyButton type="button" className="button" onClick={loadMore} busy={list.loading}>
            Load more
          </BusyButton>
        </div>
      )}
    </section>
  );
}
