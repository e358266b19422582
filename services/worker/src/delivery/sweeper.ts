import type { Queue } from 'bullmq';
import type { Db } from '@retention/db';
import type { Logger, Redis } from '@retention/runtime';
import { deliveryJob, type DeliveryJobData } from '../queues.js';

/**
 * Postgres is the truth and the backlog, Redis holds the jobs of the deliveries released to
 * run now: a delivery marked queued whose job is not in Redis would hold its endpoint's room
 * and never be sent. That happens when Redis restarts empty or is flushed, when the process
 * dies between marking deliveries queued and adding their jobs, or when a job failed because
 * Postgres and Redis were both away. The sweeper looks at every queued delivery (a handful
 * per endpoint: its in-flight cap, and as many spares at most) with no attempt in flight, and adds the job of those that
 * have none. The backlog itself is never walked: the scheduler releases it.
 */

const PAGE_SIZE = 1_000;
/** One sweep looks at this many queued deliveries at most; the next sweep goes on. */
const MAX_PER_SWEEP = 100_000;

interface QueuedRow {
  id: string;
  endpoint_id: string;
  queued_at: Date;
}

export interface SweepResult {
  queued: number;
  requeued: number;
}

export interface SweeperDeps {
  db: Db;
  queue: Queue<DeliveryJobData>;
  /** The connection the queue writes through: jobs are looked up by their key. */
  redis: Redis;
  logger: Logger;
  /** Deliveries queued less than this long ago are left to the release that is adding their jobs. */
  graceMs: number;
}

export async function sweepLostDeliveries(deps: SweeperDeps): Promise<SweepResult> {
  const { db, queue, redis, logger, graceMs } = deps;
  let queued = 0;
  let requeued = 0;
  let after: QueuedRow | undefined;
  while (queued < MAX_PER_SWEEP) {
    const { rows } = await db.raw<{ rows: QueuedRow[] }>(
      `SELECT id, endpoint_id, queued_at
         FROM webhook_deliveries
        WHERE status = 'pending' AND queued_at IS NOT NULL
          AND queued_at <= now() - ? * interval '1 millisecond'
          AND (lease_expires_at IS NULL OR lease_expires_at <= now())
          AND (?::uuid IS NULL OR (endpoint_id, queued_at, id) > (?::uuid, ?::timestamptz, ?::uuid))
        ORDER BY endpoint_id, queued_at, id
        LIMIT ?`,
      [
        graceMs,
        after?.endpoint_id ?? null,
        after?.endpoint_id ?? null,
        after?.queued_at ?? null,
        after?.id ?? null,
        PAGE_SIZE,
      ],
    );
    if (rows.length === 0) break;
    queued += rows.length;
    const jobs = rows.map((row) => deliveryJob(row.id, row.endpoint_id, row.queued_at));
    const pipeline = redis.pipeline();
    for (const job of jobs) pipeline.exists(queue.toKey(job.opts.jobId!));
    const exists = (await pipeline.exec()) ?? [];
    const lost = jobs.filter((_job, index) => exists[index]?.[1] !== 1);
    if (lost.length > 0) {
      await queue.addBulk(lost);
      requeued += lost.length;
    }
    after = rows.at(-1);
    if (rows.length < PAGE_SIZE) break;
  }
  if (requeued > 0) logger.warn({ queued, requeued }, 'sweeper re-enqueued deliveries that had no job');
  return { queued, requeued };
}
