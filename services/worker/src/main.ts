/**
 * The delivery worker: `npm run start:worker`. Turns outbox events into webhook deliveries
 * and runs the periodic jobs.
 */
import { ConfigError, loadConfig } from '@retention/core';
import { createDb, describeConnectionFailure } from '@retention/db';
import { createLogger, createRedis, onShutdownSignal, waitForRedis } from '@retention/runtime';

async function main(): Promise<void> {
  const config = loadConfig();
  const logger = createLogger('worker', config.logLevel);
  const db = createDb(config.databaseUrl, { applicationName: 'retention-worker' });
  try {
    await db.raw('SELECT 1');
  } catch (error) {
    throw new Error(describeConnectionFailure('PostgreSQL', config.databaseUrl, error));
  }
  const redis = createRedis(config.redisUrl, 'blocking', 'retention-worker', logger);
  try {
    await waitForRedis(redis);
  } catch (error) {
    redis.disconnect();
    await db.destroy();
    throw new Error(describeConnectionFailure('Redis', config.redisUrl, error));
  }
  onShutdownSignal(logger, async () => {
    redis.disconnect();
    await db.destroy();
  });
  logger.info('worker started');
}

main().catch((error: unknown) => {
  process.stderr.write(
    `worker failed to start: ${error instanceof ConfigError || error instanceof Error ? error.message : String(error)}\n`,
  );
  process.exit(1);
});
