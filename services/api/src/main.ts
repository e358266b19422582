/** The API service: `npm run start:api`. */
import { ConfigError, loadConfig } from '@retention/core';
import { createDb, describeConnectionFailure } from '@retention/db';
import { createLogger, createRedis, drainable, onShutdownSignal, waitForRedis } from '@retention/runtime';
import { createApp } from './app.js';
import { createApiServer } from './server.js';

async function main(): Promise<void> {
  const config = loadConfig();
  const logger = createLogger('api', config.logLevel);
  const db = createDb(config.databaseUrl, { applicationName: 'retention-api' });
  try {
    await db.raw('SELECT 1');
  } catch (error) {
    await db.destroy();
    throw new Error(describeConnectionFailure('PostgreSQL', config.databaseUrl, error));
  }
  const redis = createRedis(config.redisUrl, 'command', 'retention-api', logger);
  try {
    await waitForRedis(redis);
  } catch (error) {
    redis.disconnect();
    await db.destroy();
    throw new Error(describeConnectionFailure('Redis', config.redisUrl, error));
  }

  const app = createApp({ config, db, redis, logger });
  const server = createApiServer(app, logger);
  const connections = drainable(server);
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(config.port, resolve);
    });
  } catch (error) {
    redis.disconnect();
    await db.destroy();
    throw new Error(`cannot listen on port ${config.port}: ${(error as Error).message}`);
  }
  // Stop accepting, let the requests in flight finish, then close the connections they use.
  onShutdownSignal(logger, async () => {
    await connections.drain();
    redis.disconnect();
    await db.destroy();
  });
  logger.info({ port: config.port }, `API listening on http://localhost:${config.port}`);
}

main().catch((error: unknown) => {
  process.stderr.write(
    `api failed to start: ${error instanceof ConfigError || error instanceof Error ? error.message : String(error)}\n`,
  );
  process.exit(1);
});
