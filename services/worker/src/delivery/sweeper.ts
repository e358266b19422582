import { ErrorCode, Job, type Queue } from 'bullmq';
import type { Db } from '@retention/db';
import type { Logger, Redis } from '@retention/runtime';
import { DELIVERY_JOB_NAME, deliveryJob, type DeliveryJobData } from '../queues.js';

/**
 * Postgres is the truth and Redis the scheduler: a delivery that is due (and not in flight)
 * but has no job in Redis would never be sent. That happens when Redis restarts empty or is
 * flushed, when the process dies between committing deliveries and enqueueing them, or when
 * a job failed because Postgres and Redis were both away. The sweeper walks every overdue
 * delivery and enqueues those without a job; jobs that exist are left alone.
 *
 * At a worker's start it also promotes the overdue deliveries' delayed jobs: jobs parked by
 * a process that died with its line would otherwise sleep until their own wake-up.
 */

const PAGE_SIZE = 1_000;
/** One sweep looks at this many overdue deliveries at most; the next sweep goes on. */
const MAX_PER_SWEEP = 100_000;

interface DueRow {
  id: string;
  endpoint_id: string;
  next_attempt_at: Date;
}

export interface SweepResult {
  overdue: number;
  requeued: number;
  promoted: number;
}

export interface SweeperDeps {
  db: Db;
  queue: Queue<DeliveryJobData>;
  /** The connection the queue writes through: jobs are looked up by their key. */
  redis: Redis;
  logger: Logger;
  /** Deliveries overdue by less than this are left to the dispatcher that just made them. */
  graceMs: number;
  promoteParked?: boolean;
}

export async function sweepLostDeliveries(deps: SweeperDeps): Promise<SweepResult> {
  const { db, queue, redis, logger, graceMs, promoteParked = false } = deps;
  let overdue = 0;
  let promoted = 0;
  let requeued = 0;
  let after: DueRow | undefined;
  while (overdue < MAX_PER_SWEEP) {
    const { rows } = await db.raw<{ rows: DueRow[] }>(
      `SELECT id, endpoint_id, next_attempt_at
         FROM webhook_deliveries
        WHERE status = 'pending'
          AND next_attempt_at <= now() - ? * interval '1 millisecond'
          AND (lease_expires_at IS NULL OR lease_expires_at <= now())
          AND (?::timestamptz IS NULL OR (next_attempt_at, id) > (?::timestamptz, ?::uuid))
        ORDER BY next_attempt_at, id
        LIMIT ?`,
      [graceMs, after?.next_attempt_at ?? null, after?.next_attempt_at ?? null, after?.id ?? null, PAGE_SIZE],
    );
    if (rows.length === 0) break;
    overdue += rows.length;
    const pipeline = redis.pipeline();
    for (const row of rows) pipeline.exists(queue.toKey(row.id));
    const exists = (await pipeline.exec()) ?? [];
    const lost = rows.filter((_row, index) => exists[index]?.[1] !== 1);
    if (lost.length > 0) {
      await queue.addBulk(lost.map((row) => deliveryJob(row.id, row.endpoint_id)));
      requeued += lost.length;
    }
    if (promoteParked) {
      const present = rows.filter((_row, index) => exists[index]?.[1] === 1);
      const results = await Promise.allSettled(present.map((row) => promoteIfDelayed(queue, row.id)));
      promoted += results.filter((result) => result.status === 'fulfilled' && result.value).length;
    }
    after = rows.at(-1);
    if (rows.length < PAGE_SIZE) break;
  }
  if (requeued > 0) logger.warn({ overdue, requeued }, 'sweeper re-enqueued deliveries that had no job');
  if (promoted > 0) logger.info({ promoted }, 'sweeper promoted overdue parked deliveries');
  return { overdue, requeued, promoted };
}

/** False when the job is not delayed (waiting, running, or gone). */
async function promoteIfDelayed(queue: Queue<DeliveryJobData>, deliveryId: string): Promise<boolean> {
  try {
    await new Job(queue, DELIVERY_JOB_NAME, { deliveryId, endpointId: '' }, {}, deliveryId).promote();
    return true;
  } catch (error) {
    const code = (error as { code?: number }).code;
    if (code === ErrorCode.JobNotExist || code === ErrorCode.JobNotInState) return false;
    throw error;
  }
}
