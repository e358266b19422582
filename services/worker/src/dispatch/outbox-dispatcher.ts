import type { Db } from '@retention/db';
import { type Logger, type ThrottledFailures } from '@retention/runtime';
import { postgresFailures } from '../postgres-failures.js';

/**
 * Turns outbox events into deliveries: one per enabled endpoint subscribed to the event's
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
 * The deliveries are committed in the backlog, due now; the scheduler is then woken for their
 * endpoints, and releases to Redis as many as each endpoint has room for. If the process dies
 * in between, any replica's scheduler finds them due at its next look.
 */

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
  INSERT INTO webhook_deliveries (workspace_id, endpoint_id, event_id, event_seq, event_type, next_attempt_at)
  SELECT b.workspace_id, e.id, b.id, b.seq, b.type, now()
    FROM batch b
    JOIN workspaces w ON w.id = b.workspace_id AND w.processor_status = 'connected'
    JOIN webhook_endpoints e ON e.workspace_id = b.workspace_id
     AND e.enabled
     AND e.created_at <= b.recorded_at
     AND (cardinality(e.event_types) = 0 OR b.type = ANY (e.event_types))
   ORDER BY b.seq
  ON CONFLICT (endpoint_id, event_id) DO NOTHING
  RETURNING endpoint_id
), not_sent AS (
  INSERT INTO events_not_sent (event_id, reason)
  SELECT b.id, 'processor_not_connected'
    FROM batch b
    JOIN workspaces w ON w.id = b.workspace_id AND w.processor_status <> 'connected'
  ON CONFLICT (event_id) DO NOTHING
)
SELECT (SELECT count(*) FROM taken)::int AS events,
       (SELECT count(*) FROM inserted)::int AS deliveries,
       coalesce((SELECT json_agg(DISTINCT endpoint_id) FROM inserted), '[]'::json) AS endpoints
`;

export interface OutboxDispatcherOptions {
  db: Db;
  logger: Logger;
  /** The endpoints that just got deliveries: the scheduler's wake. */
  delivered: (endpointIds: string[]) => void;
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
    const { rows } = await db.raw<{ rows: Array<{ events: number; deliveries: number; endpoints: string[] }> }>(
      DISPATCH_BATCH,
      [batchSize],
    );
    const { events, deliveries, endpoints } = rows[0]!;
    if (endpoints.length > 0) delivered(endpoints);
    if (events > 0) logger.debug({ events, deliveries }, 'outbox dispatched');
    return events;
  }
}
