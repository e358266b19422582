/** The API service: `npm run start:api`. */
import { loadConfig } from '@retention/core';
import { createDb, describeConnectionFailure } from '@retention/db';
import { createLogger, createRedis, drainable, onShutdownSignal, waitForRedis } from '@retention/runtime';
import type { AddressInfo } from 'node:net';
import { createApp } from './app.js';
import { createApiMetrics } from './metrics.js';
import { createInternalServer } from './routes/operational.js';
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

  const metrics = createApiMetrics();
  const app = createApp({ config, db, redis, logger, metrics });
  const server = createApiServer(app, logger, config);
  const internal = createInternalServer({ db, redis, metrics });
  const connections = drainable(server);
  const listen = (target: typeof server, port: number, name: string) =>
    new Promise<void>((resolve, reject) => {
      target.once('error', reject);
      target.listen(port, resolve);
    }).catch((error: unknown) => {
      throw new Error(`cannot listen on ${name} ${port}: ${(error as Error).message}`);
    });
  try {
    await listen(server, config.port, 'port');
    await listen(internal, config.apiInternalPort, 'API_INTERNAL_PORT');
  } catch (error) {
    server.close();
    redis.disconnect();
    await db.destroy();
    throw error;
  }
  // Stop accepting, let the requests in flight finish, then close the connections they use.
  onShutdownSignal(logger, async () => {
    internal.closeAllConnections();
    internal.close();
    await connections.drain();
    redis.disconnect();
    await db.destroy();
  });
  const internalPort = (internal.address() as AddressInfo).port;
  logger.info(
    { port: config.port, internal_port: internalPort },
    `API listening on http://localhost:${config.port}; /readyz and /metrics on internal port ${internalPort}`,
  );
}

main().catch((error: unknown) => {
  process.stderr.write(`api failed to start: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
