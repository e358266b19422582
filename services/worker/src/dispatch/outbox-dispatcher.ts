import type { Queue } from 'bullmq';
import type { Db } from '@retention/db';
import type { Logger } from '@retention/runtime';
import { deliveryJob, type DeliveryJobData } from '../queues.js';

/**
 * Turns outbox events into deliveries: one per enabled endpoint subscribed to the event's
 * type, for workspaces whose processor is connected (events of other workspaces are marked
 * dispatched with no delivery: they are recorded, never sent). Several replicas run this side
 * by side: each claims a batch of events with FOR NO KEY UPDATE SKIP LOCKED, and (event, endpoint)
 * is unique, so no event is dispatched twice.
 *
 * The deliveries are committed before their jobs are enqueued. If Redis refuses the jobs or
 * the process dies in between, the sweeper enqueues them once they are overdue.
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
  INSERT INTO webhook_deliveries (workspace_id, endpoint_id, event_id, event_type, next_attempt_at)
  SELECT b.workspace_id, e.id, b.id, b.type, now()
    FROM batch b
    JOIN workspaces w ON w.id = b.workspace_id AND w.processor_status = 'connected'
    JOIN webhook_endpoints e ON e.workspace_id = b.workspace_id
     AND e.enabled
     AND e.created_at <= b.created_at
     AND (cardinality(e.event_types) = 0 OR b.type = ANY (e.event_types))
   ORDER BY b.seq
  ON CONFLICT (endpoint_id, event_id) DO NOTHING
  RETURNING id, endpoint_id
)
SELECT (SELECT count(*) FROM batch)::int AS events,
       coalesce((SELECT json_agg(json_build_array(id, endpoint_id)) FROM inserted), '[]'::json) AS deliveries
`;

export interface OutboxDispatcherOptions {
  db: Db;
  queue: Queue<DeliveryJobData>;
  logger: Logger;
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
    const { db, queue, logger, batchSize } = this.options;
    const { rows } = await db.raw<{ rows: Array<{ events: number; deliveries: Array<[string, string]> }> }>(
      DISPATCH_BATCH,
      [batchSize],
    );
    const { events, deliveries } = rows[0]!;
    if (deliveries.length > 0) {
      try {
        await queue.addBulk(deliveries.map(([deliveryId, endpointId]) => deliveryJob(deliveryId, endpointId)));
      } catch (error) {
        logger.warn(
          { err: error, deliveries: deliveries.length },
          'could not enqueue new deliveries; the sweeper will enqueue them',
        );
      }
    }
    if (events > 0) logger.debug({ events, deliveries: deliveries.length }, 'outbox dispatched');
    return events;
  }
}
