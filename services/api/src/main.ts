/** The API service: `npm run start:api`. */
import { loadConfig } from '@retention/core';
import { createDb, describeConnectionFailure } from '@retention/db';
import {
  createLogger,
  createRedis,
  drainable,
  onShutdownSignal,
  OpenedResources,
  waitForRedis,
} from '@retention/runtime';
import type { AddressInfo } from 'node:net';
import { createApp } from './app.js';
import { createApiMetrics } from './metrics.js';
import { createInternalServer } from './routes/operational.js';
import { createApiServer } from './server.js';

async function main(): Promise<void> {
  const config = loadConfig();
  const logger = createLogger('api', config.logLevel);
  const opened = new OpenedResources();
  const db = opened.add(createDb(config.databaseUrl, { applicationName: 'retention-api' }), (db) => db.destroy());
  await opened.step(
    () => db.raw('SELECT 1'),
    (error) => new Error(describeConnectionFailure('PostgreSQL', config.databaseUrl, error)),
  );
  const redis = opened.add(createRedis(config.redisUrl, 'command', 'retention-api', logger), (redis) =>
    redis.disconnect(),
  );
  await opened.step(
    () => waitForRedis(redis),
    (error) => new Error(describeConnectionFailure('Redis', config.redisUrl, error)),
  );

  const metrics = createApiMetrics();
  const app = createApp({ config, db, redis, logger, metrics });
  const server = createApiServer(app, logger, config);
  const connections = drainable(server);
  // At shutdown: stop accepting, let the requests in flight finish, then close what they use.
  opened.add(connections, (connections) => connections.drain());
  const internal = opened.add(createInternalServer({ db, redis, metrics }), (internal) => {
    internal.closeAllConnections();
    internal.close();
  });
  const listen = (target: typeof server, port: number, name: string) =>
    opened.step(
      () =>
        new Promise<void>((resolve, reject) => {
          target.once('error', reject);
          target.listen(port, resolve);
        }),
      (error) => new Error(`cannot listen on ${name} ${port}: ${(error as Error).message}`),
    );
  await listen(server, config.port, 'port');
  await listen(internal, config.apiInternalPort, 'API_INTERNAL_PORT');
  onShutdownSignal(logger, () => opened.closeAll());
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
