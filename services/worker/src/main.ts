/**
 * The delivery worker: `npm run start:worker`. Turns outbox events into webhook deliveries,
 * applies the payment processor's stored events and runs its backfills (docs/processor.md),
 * and runs the periodic jobs (the sweeper, closing stale campaigns). Serves /healthz,
 * /readyz and /metrics on WORKER_PORT. SIGTERM (or SIGINT) lets the attempts in flight
 * finish first.
 */
import type { AddressInfo } from 'node:net';
import { loadConfig, type Config } from '@retention/core';
import { createDb, describeConnectionFailure } from '@retention/db';
import {
  createLogger,
  createMetricsRegistry,
  createOperationalServer,
  createRedis,
  drainable,
  onShutdownSignal,
  OpenedResources,
  waitForRedis,
  type Logger,
} from '@retention/runtime';
import { registerWorkerMetrics } from './metrics.js';
import { pruneWebhookLogJob, staleCampaignsJob } from './periodic-jobs.js';
import { createWorker } from './worker.js';

async function main(): Promise<void> {
  const config = loadConfig();
  const logger = createLogger('worker', config.logLevel);
  const opened = new OpenedResources();
  // One step for the whole start: whatever fails in it, a synchronous throw included, closes
  // everything opened before the failure, newest first.
  await opened.step(() => start(config, logger, opened));
}

async function start(config: Config, logger: Logger, opened: OpenedResources): Promise<void> {
  const db = opened.add(createDb(config.databaseUrl, { applicationName: 'retention-worker', poolMax: 20 }), (db) =>
    db.destroy(),
  );
  await opened.step(
    () => db.raw('SELECT 1'),
    (error) => new Error(describeConnectionFailure('PostgreSQL', config.databaseUrl, error)),
  );
  // Kept open for /readyz: a fail-fast connection, so a probe never queues behind a reconnect.
  // No logger: a Redis that is down at start is reported once, below, in words; later outages
  // are logged by the worker's own connections and show in /readyz.
  const probe = opened.add(createRedis(config.redisUrl, 'command', 'retention-worker-probe'), (probe) =>
    probe.disconnect(),
  );
  await opened.step(
    () => waitForRedis(probe),
    (error) => new Error(describeConnectionFailure('Redis', config.redisUrl, error)),
  );
  const worker = await opened.step(() =>
    createWorker({
      config,
      db,
      logger,
      options: { periodicJobs: [staleCampaignsJob(db, config), pruneWebhookLogJob(db, config)] },
    }),
  );

  const registry = createMetricsRegistry('worker');
  registerWorkerMetrics({ registry, events: worker.events, deliveryQueue: worker.deliveryQueue, db, logger });
  const operational = createOperationalServer({
    readiness: { postgres: () => db.raw('SELECT 1'), redis: () => probe.ping() },
    registry,
  });
  opened.add(drainable(operational), (connections) => connections.drain());
  // Added last, so closed first: /readyz and /metrics answer while the worker finishes its attempts.
  opened.add(worker, (worker) => worker.close());
  await opened.step(
    () =>
      new Promise<void>((resolve, reject) => {
        operational.once('error', reject);
        operational.listen(config.workerPort, resolve);
      }),
    (error) => new Error(`cannot listen on WORKER_PORT ${config.workerPort}: ${(error as Error).message}`),
  );

  // An attempt in flight takes at most the request timeout; leave room to record it.
  onShutdownSignal(logger, () => opened.closeAll(), Math.max(30_000, config.webhookTimeoutMs + 15_000));
  logger.info({ port: (operational.address() as AddressInfo).port }, 'worker started');
}

/** How long a failed start may take to end by itself before it is ended, saying so. */
const EXIT_GRACE_MS = 5_000;

main().catch((error: unknown) => {
  process.stderr.write(`worker failed to start: ${error instanceof Error ? error.message : String(error)}\n`);
  // Everything opened was closed by now, so the process ends by itself, as soon as the last
  // socket is gone. Were something left open (a leak), it would still end, and say so.
  process.exitCode = 1;
  setTimeout(() => {
    process.stderr.write(
      `worker: still running ${EXIT_GRACE_MS} ms after a failed start (something was left open); exiting\n`,
    );
    process.exit(1);
  }, EXIT_GRACE_MS).unref();
});
