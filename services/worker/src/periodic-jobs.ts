import { Queue, Worker } from 'bullmq';
import type { Config } from '@retention/core';
import type { Db } from '@retention/db';
import { closeStaleCampaigns, pruneProcessorEvents, pruneWebhookLog } from '@retention/domain';
import { throttledWarn, type Logger, type Redis } from '@retention/runtime';
import { postgresFailures } from './postgres-failures.js';
import { QUEUE_NAMES } from './queues.js';

/**
 * Jobs that run every so often, once per period across all replicas: each is a BullMQ job
 * scheduler (`upsertJobScheduler`), so Redis decides which replica runs an iteration. Every
 * replica upserts the schedulers at start (idempotent), and checks now and then that they
 * still exist, because a Redis that lost its data loses them too.
 *
 * An iteration may overlap the next one on another replica if it runs longer than its
 * period, so every job must be safe to run concurrently with itself.
 */
export interface PeriodicJob {
  /** Also the scheduler's id: keep it stable across releases. */
  name: string;
  everyMs: number;
  run(): Promise<unknown>;
}

export interface PeriodicJobsOptions {
  jobs: readonly PeriodicJob[];
  /** Non-blocking connection: scheduling. */
  producer: Redis;
  /** Blocking connection: the worker that runs iterations. */
  consumer: Redis;
  prefix: string;
  logger: Logger;
  /** How often each replica checks that the schedulers are still there. */
  checkEveryMs: number;
}

export interface PeriodicJobs {
  close(): Promise<void>;
}

export async function startPeriodicJobs(options: PeriodicJobsOptions): Promise<PeriodicJobs> {
  const { jobs, logger, prefix } = options;
  const byName = new Map(jobs.map((job) => [job.name, job]));
  // Repeats for every failed poll while Redis is away: throttled, like the connections' own.
  const warn = throttledWarn(logger);
  const queue = new Queue(QUEUE_NAMES.periodic, { connection: options.producer, prefix });
  queue.on('error', (error) => warn('periodic queue', error, 'periodic queue error'));

  const schedule = (job: PeriodicJob) =>
    queue.upsertJobScheduler(
      job.name,
      { every: job.everyMs },
      { name: job.name, opts: { removeOnComplete: true, removeOnFail: 100 } },
    );
  let worker: Worker;
  try {
    await Promise.all(jobs.map(schedule));
    worker = new Worker(
      QUEUE_NAMES.periodic,
      async (iteration) => {
        const job = byName.get(iteration.name);
        if (!job) return; // a job of another release, not ours to run
        const started = Date.now();
        const result = await job.run();
        logger.debug({ job: job.name, duration_ms: Date.now() - started, result }, 'periodic job ran');
      },
      { connection: options.consumer, prefix, concurrency: Math.max(1, jobs.length) },
    );
  } catch (error) {
    // Nothing of ours is left open by a failed start (the caller closes the connections).
    await queue.close().catch(() => undefined);
    throw error;
  }
  worker.on('error', (error) => warn('periodic worker', error, 'periodic worker error'));
  // Each job fails every period while PostgreSQL is away (the sweeper every 5 s): throttled per job.
  const failures = postgresFailures(logger);
  worker.on('failed', (iteration, error) =>
    failures.failed(`periodic job ${iteration?.name ?? ''}`, error, 'periodic job failed; it runs again next period', {
      job: iteration?.name,
    }),
  );
  worker.on('completed', (iteration) => failures.succeeded(`periodic job ${iteration.name}`));

  let checking: Promise<void> | null = null;
  const timer = setInterval(() => {
    checking ??= (async () => {
      for (const job of jobs) {
        if (await queue.getJobScheduler(job.name)) continue;
        logger.warn({ job: job.name }, 'job scheduler missing (Redis lost its data?): restoring it');
        await schedule(job);
      }
    })()
      .catch((error: unknown) => {
        warn('job schedulers', error, 'could not check the job schedulers');
      })
      .finally(() => {
        checking = null;
      });
  }, options.checkEveryMs);
  timer.unref();

  return {
    async close() {
      clearInterval(timer);
      await checking;
      await worker.close();
      await queue.close();
    },
  };
}

// The domain's periodic jobs, as the worker's entry point schedules them.

const STALE_CAMPAIGNS_JOB_NAME = 'close-stale-campaigns';

export function staleCampaignsJob(db: Db, config: Config): PeriodicJob {
  return {
    name: STALE_CAMPAIGNS_JOB_NAME,
    everyMs: config.staleCampaignCheckEveryMs,
    run: () => closeStaleCampaigns(db, { olderThanDays: config.staleCampaignDays }),
  };
}

const PRUNE_WEBHOOK_LOG_JOB_NAME = 'prune-webhook-log';

/** Hourly: each run deletes what aged past the retention in the hour, in small batches. */
export function pruneWebhookLogJob(db: Db, config: Config): PeriodicJob {
  return {
    name: PRUNE_WEBHOOK_LOG_JOB_NAME,
    everyMs: 3_600_000,
    run: () => pruneWebhookLog(db, { olderThanDays: config.webhookLogRetentionDays }),
  };
}

const PRUNE_PROCESSOR_EVENTS_JOB_NAME = 'prune-processor-events';

/**
 * Hourly, like the webhook log's: each run deletes the Stripe events applied or ignored that aged
 * past PROCESSOR_EVENT_RETENTION_DAYS in the hour, in small batches (docs/processor.md, "Retention").
 */
export function pruneProcessorEventsJob(db: Db, config: Config): PeriodicJob {
  return {
    name: PRUNE_PROCESSOR_EVENTS_JOB_NAME,
    everyMs: 3_600_000,
    run: () => pruneProcessorEvents(db, { olderThanDays: config.processorEventRetentionDays }),
  };
}
