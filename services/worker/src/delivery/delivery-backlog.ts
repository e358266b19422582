import type { Queue } from 'bullmq';
import type { Db } from '@retention/db';
import { deliveryJob, type DeliveryJobData } from '../queues.js';
import { oldestDueInBacklog } from './backlog-sql.js';
import type { EndpointAllowance, ReleasedDelivery, SchedulerPort } from './delivery-scheduler.js';

/**
 * The scheduler's port on Postgres (the backlog, and which deliveries are queued) and Redis
 * (the queued deliveries' jobs). Migration 0015 has the two indexes these statements walk.
 */

/**
 * Per endpoint: its room (allowance less what is queued, but for deliveries not in flight:
 * those whose result is being recorded, and jobs' spares), then that many of its oldest due
 * deliveries (backlog-sql.ts).
 * Two replicas releasing for one endpoint at once may each fill its room: what Redis holds
 * for it is then up to one cap per replica, as an endpoint's attempts are.
 */
const RELEASE = `
WITH wanted AS (
  SELECT w.endpoint_id,
         w.allowance - (SELECT count(*) FROM webhook_deliveries q
                         WHERE q.endpoint_id = w.endpoint_id AND q.status = 'pending'
                           AND q.queued_at IS NOT NULL AND q.id <> ALL (?::uuid[])) AS room
    FROM unnest(?::uuid[], ?::int[]) AS w (endpoint_id, allowance)
), picked AS (
  SELECT d.id
    FROM wanted w
  ${oldestDueInBacklog('w.endpoint_id', 'greatest(w.room, 0)')}
)
UPDATE webhook_deliveries d
   SET queued_at = now()
  FROM picked p
 WHERE d.id = p.id AND d.queued_at IS NULL
RETURNING d.id, d.endpoint_id, d.queued_at
`;

/** Each endpoint with a backlog, found by a skip scan of the backlog index, and its oldest due time. */
const BACKLOG = `
WITH RECURSIVE endpoints AS (
  (SELECT endpoint_id FROM webhook_deliveries
    WHERE status = 'pending' AND queued_at IS NULL
    ORDER BY endpoint_id LIMIT 1)
  UNION ALL
  SELECT (SELECT d.endpoint_id FROM webhook_deliveries d
           WHERE d.status = 'pending' AND d.queued_at IS NULL AND d.endpoint_id > e.endpoint_id
           ORDER BY d.endpoint_id LIMIT 1)
    FROM endpoints e
   WHERE e.endpoint_id IS NOT NULL
)
SELECT e.endpoint_id,
       (SELECT d.next_attempt_at FROM webhook_deliveries d
         WHERE d.endpoint_id = e.endpoint_id AND d.status = 'pending' AND d.queued_at IS NULL
         ORDER BY d.next_attempt_at LIMIT 1) AS due_at
  FROM endpoints e
 WHERE e.endpoint_id IS NOT NULL
`;

export class DeliveryBacklog implements SchedulerPort {
  constructor(
    private readonly db: Db,
    private readonly queue: Queue<DeliveryJobData>,
  ) {}

  async release(allowances: readonly EndpointAllowance[], notCounted: readonly string[]): Promise<ReleasedDelivery[]> {
    const { rows } = await this.db.raw<{ rows: Array<{ id: string; endpoint_id: string; queued_at: Date }> }>(RELEASE, [
      [...notCounted],
      allowances.map((item) => item.endpointId),
      allowances.map((item) => item.allowance),
    ]);
    return rows.map((row) => ({ deliveryId: row.id, endpointId: row.endpoint_id, queuedAt: row.queued_at }));
  }

  async enqueue(released: readonly ReleasedDelivery[]): Promise<void> {
    await this.queue.addBulk(released.map((item) => deliveryJob(item.deliveryId, item.endpointId, item.queuedAt)));
  }

  async backlog(): Promise<Array<{ endpointId: string; dueAt: Date }>> {
    const { rows } = await this.db.raw<{ rows: Array<{ endpoint_id: string; due_at: Date }> }>(BACKLOG);
    return rows.map((row) => ({ endpointId: row.endpoint_id, dueAt: row.due_at }));
  }
}
