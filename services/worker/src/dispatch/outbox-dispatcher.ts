import type { Db } from '@retention/db';
import { type Logger, type ThrottledFailures } from '@retention/runtime';
import { postgresFailures } from '../postgres-failures.js';

/**
 * Turns outbox events into deliveries: one per endpoint subscribed to the event's
 * type that existed when the event was recorded (its outbox row's `recorded_at`, not the
 * event's `created_at`, which for a processor's event is when it happened, possibly days
 * before: migration 0020), for workspaces whose processor is connected (events of other workspaces leave the
 * outbox with no delivery: they are recorded, never sent, and `events_not_sent` says why, for the
 * dashboard's campaign timeline: migration 0023). The outbox is `event_outbox`, one
 * narrow row per event still to dispatch, written by a trigger on `events` (migration 0018).
 * Several replicas run this side by side: each takes a batch of outbox rows with FOR UPDATE
 * SKIP LOCKED and deletes them in the statement that makes their deliveries, and (event,
 * endpoint) is unique, so no event is dispatched twice. A row whose event is gone (its
 * workspace was deleted) leaves with no delivery.
 *
 * An endpoint that is off (by hand or after its failures) and subscribed also gets its delivery,
 * made already `skipped`, with nothing sent: one `skipped` line in its log (attempt 1, as a retry
 * skipped when an endpoint goes off takes the next number), so that an event recorded while it
 * was off is on record and "Retry failed since…" can send it once its endpoint is on again
 * (docs/webhooks.md, "While an endpoint is off"). Turning it on sends new events only.
 *
 * The pending deliveries are committed in the backlog, due now; the scheduler is then woken for their
 * endpoints, and releases to Redis as many as each endpoint has room for. If the process dies
 * in between, any replica's scheduler finds them due at its next look.
 */

/** The log line of a delivery made skipped because its endpoint was off when its event was recorded. */
const ENDPOINT_OFF_SKIP = 'skipped: the endpoint was off when this event was recorded';

/**
 * The batch's rows are found by their keys alone, whatever the statistics say (plans seen on
 * the bench's database, whose statistics lag a burst of events, in docs/performance.md, "A
 * narrow outbox"): as arrays (`= ANY (ARRAY(...))`), since a join let the planner read the
 * whole outbox and every event to find them; and the events in a MATERIALIZED CTE, since
 * inlined into the INSERT's join it let the planner walk the workspace's whole history by
 * `events_workspace_idx` (150 ms a batch of 500, against 10).
 */
const DISPATCH_BATCH = `
WITH taken AS (
  DELETE FROM event_outbox
   WHERE seq = ANY (ARRAY(SELECT seq FROM event_outbox ORDER BY seq LIMIT ? FOR UPDATE SKIP LOCKED))
  RETURNING event_id, recorded_at
), batch AS MATERIALIZED (
  SELECT ev.id, ev.seq, ev.workspace_id, ev.type, taken.recorded_at
    FROM events ev
    JOIN taken ON taken.event_id = ev.id
   WHERE ev.id = ANY (ARRAY(SELECT event_id FROM taken))
), inserted AS (
  INSERT INTO webhook_deliveries
         (workspace_id, endpoint_id, event_id, event_seq, event_type, status, attempt_count, next_attempt_at, completed_at)
  SELECT b.workspace_id, e.id, b.id, b.seq, b.type,
         CASE WHEN e.enabled THEN 'pending' ELSE 'skipped' END,
         CASE WHEN e.enabled THEN 0 ELSE 1 END,
         CASE WHEN e.enabled THEN now() END,
         CASE WHEN e.enabled THEN NULL ELSE now() END
    FROM batch b
    JOIN workspaces w ON w.id = b.workspace_id AND w.processor_status = 'connected'
    JOIN webhook_endpoints e ON e.workspace_id = b.workspace_id
     AND e.created_at <= b.recorded_at
     AND (cardinality(e.event_types) = 0 OR b.type = ANY (e.event_types))
   ORDER BY b.seq
  ON CONFLICT (endpoint_id, event_id) DO NOTHING
  RETURNING id, endpoint_id, event_type, status
), skipped AS (
  INSERT INTO webhook_attempts (delivery_id, endpoint_id, event_type, attempt, outcome, error, duration_ms, attempted_at, url)
  SELECT i.id, i.endpoint_id, i.event_type, 1, 'skipped', ?, 0, now(), e.url
    FROM inserted i
    JOIN webhook_endpoints e ON e.id = i.endpoint_id
   WHERE i.status = 'skipped'
  RETURNING 1
), not_sent AS (
  INSERT INTO events_not_sent (event_id, reason)
  SELECT b.id, 'processor_not_connected'
    FROM batch b
    JOIN workspaces w ON w.id = b.workspace_id AND w.processor_status <> 'connected'
  ON CONFLICT (event_id) DO NOTHING
)
SELECT (SELECT count(*) FROM taken)::int AS events,
       (SELECT count(*) FROM inserted WHERE status = 'pending')::int AS deliveries,
       (SELECT count(*) FROM skipped)::int AS skipped,
       coalesce((SELECT json_agg(DISTINCT endpoint_id) FROM inserted WHERE status = 'pending'), '[]'::json) AS endpoints
`;

export interface OutboxDispatcherOptions {
  db: Db;
  logger: Logger;
  /** The endpoints that just got deliveries to send: the scheduler's wake. */
  delivered: (endpointIds: string[]) => void;
  /** How many deliveries a batch made already skipped (their endpoint off): the metrics' count. */
  skipped?: (count: number) => void;
  batchSize: number;
}

export class OutboxDispatcher {
  private running: Promise<void> | null = null;
  private wakeAgain = false;
  private stopped = false;
  /** Polled every second: while PostgreSQL is away, a few lines per outage, not one a second. */
  private readonly failures: ThrottledFailures;

  constructor(private readonly options: OutboxDispatcherOptions) {
    this.failures = postgresFailures(options.logger);
  }

  /** Dispatches everything pending; a call while a run is going makes it go round once more. */
  wake(): void {
    if (this.stopped) return;
    if (this.running) {
      this.wakeAgain = true;
      return;
    }
    this.running = this.drain().finally(() => {
      this.running = null;
    });
  }

  /** Stops taking new batches and waits for the current one. */
  async stop(): Promise<void> {
    this.stopped = true;
    await this.running;
  }

  private async drain(): Promise<void> {
    do {
      this.wakeAgain = false;
      try {
        while (!this.stopped && (await this.dispatchBatch()) === this.options.batchSize);
        this.failures.succeeded('outbox dispatch');
      } catch (error) {
        // The next poll tries again; nothing was committed by the failed batch.
        this.failures.failed('outbox dispatch', error, 'outbox dispatch failed');
        return;
      }
    } while (this.wakeAgain && !this.stopped);
  }

  /** Returns how many events the batch took. */
  async dispatchBatch(): Promise<number> {
    const { db, logger, batchSize, delivered } = this.options;
    const { rows } = await db.raw<{
      rows: Array<{ events: number; deliveries: number; skipped: number; endpoints: string[] }>;
    }>(DISPATCH_BATCH, [batchSize, ENDPOINT_OFF_SKIP]);
    const { events, deliveries, skipped, endpoints } = rows[0]!;
    if (endpoints.length > 0) delivered(endpoints);
    if (skipped > 0) this.options.skipped?.(skipped);
    if (events > 0) logger.debug({ events, deliveries, skipped }, 'outbox dispatched');
    return events;
  }
}
