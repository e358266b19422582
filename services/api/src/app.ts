import express, { type Express } from 'express';
import type { Config } from '@retention/core';
import type { Db } from '@retention/db';
import type { Logger, Redis } from '@retention/runtime';
import { apiAccess } from './middleware/authenticate.js';
import { errorHandler, unknownRoute } from './middleware/errors.js';
import { requestId } from './middleware/request-id.js';
import { requestLog } from './middleware/request-log.js';
import { SlidingWindowRateLimiter } from './rate-limiter.js';
import { campaignRoutes } from './routes/campaigns.js';
import { cancelSessionRoutes } from './routes/cancel-sessions.js';
import { customerRoutes } from './routes/customers.js';
import { statsRoutes } from './routes/stats.js';

export interface AppDependencies {
  config: Config;
  db: Db;
  /** A fail-fast ("command") connection: the rate limit must never queue behind a reconnect. */
  redis: Redis;
  logger: Logger;
  /** The rate-limit window; one minute (spec part 8). Tests shorten it to watch it slide. */
  rateLimitWindowMs?: number;
}

/** Builds the HTTP application. It never listens: main.ts and the tests do that. */
export function createApp({ config, db, redis, logger, rateLimitWindowMs }: AppDependencies): Express {
  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');
  app.set('trust proxy', config.trustProxy);
  app.set('query parser', false); // validateQuery reads the raw query string itself

  app.use(requestId);
  app.use(requestLog(logger));

  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });

  const v1 = express.Router();
  v1.use((_req, res, next) => {
    // Account data: never cached by browsers or proxies.
    res.setHeader('Cache-Control', 'no-store');
    next();
  });
  const limiter = new SlidingWindowRateLimiter(redis, config.redisKeyPrefix, rateLimitWindowMs);
  v1.use(apiAccess({ db, limiter, logger }));
  v1.use(customerRoutes(db), campaignRoutes(db), cancelSessionRoutes(db), statsRoutes(db));
  app.use('/api/v1', v1);

  app.use(unknownRoute);
  app.use(errorHandler(logger));
  return app;
}
