/** The API service: `npm run start:api`. */
import { loadConfig, localBaseUrlWarning } from '@retention/core';
import { createDb, describeConnectionFailure, requireUsableDatabase } from '@retention/db';
import { createWebhookSender, webhookSenderOptions } from '@retention/domain';
import {
  createLogger,
  createMailer,
  drainable,
  listenOn,
  onShutdownSignal,
  runServiceStart,
  waitForRedis,
} from '@retention/runtime';
import type { AddressInfo } from 'node:net';
import { createApiRedis } from './api-redis.js';
import { createApp } from './app.js';
import { createApiMetrics } from './metrics.js';
import { RefusalCounter } from './processor/refusal-counter.js';
import { createInternalServer } from './routes/operational.js';
import { createApiServer } from './server.js';

// One step for the whole start: whatever fails in it, a synchronous throw included (a setting
// refused while the app is built), closes everything opened before the failure, and the
// process ends by itself, exit code 1.
runServiceStart('api', async (opened) => {
  const config = loadConfig();
  const logger = createLogger('api', config.logLevel);
  const db = opened.add(createDb(config.databaseUrl, { applicationName: 'retention-api' }), (db) => db.destroy());
  // Unreachable, or without this release's migrations (every query would fail): refused now, in one line.
  await opened.step(() => requireUsableDatabase(db, config.databaseUrl));
  const redis = opened.add(createApiRedis(config.redisUrl, 'retention-api', logger), (redis) => redis.disconnect());
  await opened.step(
    () => waitForRedis(redis),
    (error) => new Error(describeConnectionFailure('Redis', config.redisUrl, error)),
  );

  // The dashboard's email and its "Send test" client: made here, so they close with the rest.
  const mailer = createMailer(config, logger);
  if (mailer) opened.add(mailer, (it) => it.close());
  const sender = opened.add(createWebhookSender(webhookSenderOptions(config)), (it) => it.close());
  const metrics = createApiMetrics();
  // Closed after the requests drain (added before them), before the database: no count lost.
  const refusals = opened.add(new RefusalCounter(db, logger), (it) => it.close());
  const app = createApp({ config, db, redis, logger, metrics, mailer, sender, refusals });
  const server = createApiServer(app, logger, config);
  const connections = drainable(server);
  // At shutdown: stop accepting, let the requests in flight finish, then close what they use.
  opened.add(connections, (connections) => connections.drain());
  const internal = opened.add(createInternalServer({ db, redis, metrics }), (internal) => {
    internal.closeAllConnections();
    internal.close();
  });
  await listenOn(server, config.port, 'PORT');
  await listenOn(internal, config.apiInternalPort, 'API_INTERNAL_PORT');
  onShutdownSignal(logger, () => opened.closeAll());
  // The ports listened on: a PORT or API_INTERNAL_PORT of 0 is one the system picked, which the
  // line tells whoever started the process (a test running side by side with others).
  const port = (server.address() as AddressInfo).port;
  const internalPort = (internal.address() as AddressInfo).port;
  const baseUrlWarning = localBaseUrlWarning(config.baseUrl);
  if (baseUrlWarning) logger.warn({ variable: 'BASE_URL' }, baseUrlWarning);
  logger.info(
    { port, internal_port: internalPort },
    `API listening on http://localhost:${port}; /readyz and /metrics on internal port ${internalPort}`,
  );
});
