/**
 * The delivery worker: `npm run start:worker`. Turns outbox events into webhook deliveries,
 * applies the payment processor's stored events and runs its backfills (docs/processor.md),
 * and runs the periodic jobs (the sweeper, closing stale campaigns, the webhook log's and the
 * Stripe inbox's retention). Serves /healthz,
 * /readyz and /metrics on WORKER_PORT. SIGTERM (or SIGINT) lets the attempts in flight
 * finish first.
 */
import type { AddressInfo } from 'node:net';
import { loadConfig, localBaseUrlWarning } from '@retention/core';
import { createDb, describeConnectionFailure, requireUsableDatabase } from '@retention/db';
import {
  createLogger,
  createMetricsRegistry,
  createOperationalServer,
  createRedis,
  drainable,
  listenOn,
  onShutdownSignal,
  redisReadiness,
  runServiceStart,
  waitForRedis,
} from '@retention/runtime';
import { registerWorkerMetrics } from './metrics.js';
import { pruneProcessorEventsJob, pruneWebhookLogJob, staleCampaignsJob } from './periodic-jobs.js';
import { createWorker } from './worker.js';

// One step for the whole start: whatever fails in it, a synchronous throw included, closes
// everything opened before the failure, and the process ends by itself, exit code 1.
runServiceStart('worker', async (opened) => {
  const config = loadConfig();
  const logger = createLogger('worker', config.logLevel);
  const db = opened.add(createDb(config.databaseUrl, { applicationName: 'retention-worker', poolMax: 20 }), (db) =>
    db.destroy(),
  );
  // Unreachable, or without this release's migrations (every query would fail): refused now, in one line.
  await opened.step(() => requireUsableDatabase(db, config.databaseUrl));
  // Kept open for /readyz: a fail-fast connection, so a probe never queues behind a reconnect.
  // No logger: a Redis that is down at start is reported once, below, in words; later outages
  // are logged by the worker's own connections and show in /readyz.
  const probe = opened.add(createRedis(config.redisUrl, 'command', 'retention-worker-probe'), (probe) =>
    probe.disconnect(),
  );
  // From now on: what it last saw of Redis is what /readyz says when Redis is down.
  const redisReady = redisReadiness(probe);
  await opened.step(
    () => waitForRedis(probe),
    (error) => new Error(describeConnectionFailure('Redis', config.redisUrl, error)),
  );
  // createWorker closes what it opened itself when it fails; not added until it is whole.
  const worker = await createWorker({
    config,
    db,
    logger,
    options: {
      periodicJobs: [
        staleCampaignsJob(db, config),
        pruneWebhookLogJob(db, config),
        pruneProcessorEventsJob(db, config),
      ],
    },
  });

  const registry = createMetricsRegistry('worker');
  registerWorkerMetrics({ registry, events: worker.events, deliveryQueue: worker.deliveryQueue, db, logger });
  const operational = createOperationalServer({
    readiness: { postgres: () => db.raw('SELECT 1'), redis: redisReady },
    registry,
  });
  opened.add(drainable(operational), (connections) => connections.drain());
  // Added last, so closed first: /readyz and /metrics answer while the worker finishes its attempts.
  opened.add(worker, (worker) => worker.close());
  await listenOn(operational, config.workerPort, 'WORKER_PORT');

  // An attempt in flight takes at most the request timeout; leave room to record it.
  onShutdownSignal(logger, () => opened.closeAll(), Math.max(30_000, config.webhookTimeoutMs + 15_000));
  // The worker makes links too: the auto-disable alert's email links to the dashboard.
  const baseUrlWarning = localBaseUrlWarning(config.baseUrl);
  if (baseUrlWarning) logger.warn({ variable: 'BASE_URL' }, baseUrlWarning);
  logger.info({ port: (operational.address() as AddressInfo).port }, 'worker started');
});
