/**
 * The delivery worker: `npm run start:worker`. Turns outbox events into webhook deliveries
 * and runs the periodic jobs. SIGTERM (or SIGINT) lets the attempts in flight finish first.
 */
import { ConfigError, loadConfig } from '@retention/core';
import { createDb, describeConnectionFailure } from '@retention/db';
import { createLogger, createRedis, onShutdownSignal, waitForRedis } from '@retention/runtime';
import { createWorker } from './worker.js';

async function main(): Promise<void> {
  const config = loadConfig();
  const logger = createLogger('worker', config.logLevel);
  const db = createDb(config.databaseUrl, { applicationName: 'retention-worker', poolMax: 20 });
  try {
    await db.raw('SELECT 1');
  } catch (error) {
    await db.destroy();
    throw new Error(describeConnectionFailure('PostgreSQL', config.databaseUrl, error));
  }
  const probe = createRedis(config.redisUrl, 'command', 'retention-worker-probe');
  try {
    await waitForRedis(probe);
  } catch (error) {
    await db.destroy();
    throw new Error(describeConnectionFailure('Redis', config.redisUrl, error));
  } finally {
    probe.disconnect();
  }
  let worker;
  try {
    worker = await createWorker({ config, db, logger });
  } catch (error) {
    await db.destroy();
    throw error;
  }
  // An attempt in flight takes at most the request timeout; leave room to record it.
  onShutdownSignal(
    logger,
    async () => {
      await worker.close();
      await db.destroy();
    },
    Math.max(30_000, config.webhookTimeoutMs + 15_000),
  );
  logger.info('worker started');
}

main().catch((error: unknown) => {
  process.stderr.write(
    `worker failed to start: ${error instanceof ConfigError || error instanceof Error ? error.message : String(error)}\n`,
  );
  process.exit(1);
});
