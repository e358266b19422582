import type { Db } from '@retention/db';
import type { Logger } from '@retention/runtime';

/**
 * Turns outbox events into deliveries: one per enabled endpoint subscribed to the event's
 * type, for workspaces whose processor is connected (events of other workspaces are marked
 * dispatched with no delivery: they are recorded, never sent). Several replicas run this side
 * by side: each claims a batch of events with FOR NO KEY UPDATE SKIP LOCKED, and (event, endpoint)
 * is unique, so no event is dispatched twice.
 *
 * The deliveries are committed in the backlog, due now; the scheduler is then woken for their
 * endpoints, and releases to Redis as many as each endpoint has room for. If the process dies
 * in between, any replica's scheduler finds them due at its next look.
 */

const DISPATCH_BATCH = `
WITH batch AS (
  SELECT id, seq, workspace_id, type, created_at
    FROM events
   WHERE dispatched_at IS NULL
   ORDER BY seq
   LIMIT ?
     FOR NO KEY UPDATE SKIP LOCKED
), marked AS (
  UPDATE events SET dispatched_at = now() FROM batch WHERE events.id = batch.id
), inserted AS (
  INSERT INTO webhook_deliveries (workspace_id, endpoint_id, event_id, event_seq, event_type, next_attempt_at)
  SELECT b.workspace_id, e.id, b.id, b.seq, b.type, now()
    FROM batch b
    JOIN workspaces w ON w.id = b.workspace_id AND w.processor_status = 'connected'
    JOIN webhook_endpoints e ON e.workspace_id = b.workspace_id
     AND e.enabled
     AND e.created_at <= b.created_at
     AND (cardinality(e.event_types) = 0 OR b.type = ANY (e.event_types))
   ORDER BY b.seq
  ON CONFLICT (endpoint_id, event_id) DO NOTHING
  RETURNING endpoint_id
)
SELECT (SELECT count(*) FROM batch)::int AS events,
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

  constructor(private readonly options: OutboxDispatcherOptions) {}

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
      } catch (error) {
        // The next poll tries again; nothing was committed by the failed batch.
        this.options.logger.error({ err: error }, 'outbox dispatch failed');
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
