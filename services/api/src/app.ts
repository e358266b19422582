import express, { type Express } from 'express';
import type { Config } from '@retention/core';
import type { Db } from '@retention/db';
import type { WebhookSender } from '@retention/domain';
import type { Logger, Mailer, Redis } from '@retention/runtime';
import { DASHBOARD_API_PREFIX, DASHBOARD_ROUTE_PATTERNS, dashboardApi } from './dashboard/router.js';
import { dashboardPages } from './dashboard/static.js';
import { createApiMetrics, routeLabeler, type ApiMetrics } from './metrics.js';
import { authenticate } from './middleware/authenticate.js';
import { checkClientIp } from './middleware/client-ip.js';
import { errorHandler, readMethodsOnly, unknownRoute } from './middleware/errors.js';
import { requestId } from './middleware/request-id.js';
import { requestLog } from './middleware/request-log.js';
import { requestMetrics } from './middleware/request-metrics.js';
import { buildOpenApiDocument } from './openapi/document.js';
import { SlidingWindowRateLimiter } from './rate-limiter.js';
import { documentationRoutes, DOCUMENTATION_PATHS } from './routes/documentation.js';
import { apiRouter } from './routes/api-router.js';
import { API_ENDPOINTS, API_PREFIX, API_VERSION_HEADER, apiRoutes } from './routes/index.js';
import { operationalRoutes, PROBE_PATHS } from './routes/operational.js';
import { stripeBeforeExpress } from './processor/stripe-before-express.js';
import { RefusalCounter } from './processor/refusal-counter.js';
import { STRIPE_WEBHOOK_ROUTE, stripeReceiver, stripeWebhookRoutes } from './processor/stripe-webhooks.js';
import { serveBeforeExpress } from './server.js';

export interface AppDependencies {
  config: Config;
  db: Db;
  /** A fail-fast ("command") connection: the rate limit must never queue behind a reconnect. */
  redis: Redis;
  logger: Logger;
  /**
   * The rate-limit window; one minute (docs/api.md, "Rate limits"). Tests shorten it to watch it
   * slide.
   */
  rateLimitWindowMs?: number;
  /**
   * How long a token look-up is cached (docs/api.md, "Rate limits"). Tests shorten it to outlive
   * one.
   */
  tokenLookupMs?: number;
  /** The process's metrics; a registry of the app's own when not given. */
  metrics?: ApiMetrics;
  /** The dashboard's email; made from SMTP_URL when not given (none when it is unset). */
  mailer?: Mailer | null;
  /** The dashboard's "Send test" client; one of the app's own when not given. */
  sender?: WebhookSender;
  /**
   * Counts Stripe deliveries refused for their signature, after their answer; closed by the
   * caller after the server drains and before the database, so a shutdown loses no count. One
   * of the app's own (never closed) when not given.
   */
  refusals?: RefusalCounter;
}

/** Builds the HTTP application. It never listens: main.ts and the tests do that. */
export function createApp({
  config,
  db,
  redis,
  logger,
  rateLimitWindowMs,
  tokenLookupMs,
  metrics,
  mailer,
  sender,
  refusals,
}: AppDependencies): Express {
  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');
  app.set('trust proxy', config.trustProxy);
  checkClientIp(app);
  app.set('query parser', false); // validateQuery reads the raw query string itself

  const appMetrics = metrics ?? createApiMetrics();
  const routePatterns = [
    { patterns: [...PROBE_PATHS, ...DOCUMENTATION_PATHS] },
    { patterns: API_ENDPOINTS.map((endpoint) => `${API_PREFIX}${endpoint.path}`), strict: true },
    { patterns: [...DASHBOARD_ROUTE_PATTERNS, STRIPE_WEBHOOK_ROUTE] },
  ];
  app.use(requestId);
  app.use(requestMetrics(appMetrics, routeLabeler(routePatterns)));
  app.use(requestLog(logger, PROBE_PATHS));

  const v1 = apiRouter();
  v1.use((_req, res, next) => {
    // Account data: never cached by browsers or proxies.
    res.setHeader('Cache-Control', 'no-store');
    res.setHeader(API_VERSION_HEADER.name, API_VERSION_HEADER.value);
    next();
  });
  const limiter = new SlidingWindowRateLimiter(redis, config.redisKeyPrefix, rateLimitWindowMs);
  v1.use(
    authenticate({
      db,
      limiter,
      logger,
      metrics: appMetrics,
      expectedReplicas: config.apiExpectedReplicas,
      tokenLookupMs,
    }),
  );
  // After authentication, like an unknown path under the prefix: a wrong method is a 404 with
  // the rate-limit headers, and says nothing to a client without a valid token.
  v1.use(readMethodsOnly);
  v1.use(apiRoutes(db));
  // Mounted through a case-sensitive router of its own: the app's router would also let
  // /API/V1 in. The dashboard and the probes below keep Express's lenient defaults.
  const api = apiRouter();
  api.use(API_PREFIX, v1);
  app.use(api);

  // Stripe's events: served by createApiServer before Express when they are plain (docs/decisions.md,
  // "Stripe's events before Express"), by this route otherwise; one receiver behind both.
  const receiver = stripeReceiver({ config, db, refusals: refusals ?? new RefusalCounter(db, logger) });
  serveBeforeExpress(app, stripeBeforeExpress({ receiver, logger, metrics: appMetrics }));
  app.use(stripeWebhookRoutes(receiver));
  app.use(DASHBOARD_API_PREFIX, dashboardApi({ config, db, redis, logger, mailer, sender }));
  app.use(dashboardPages());

  app.use(readMethodsOnly);
  app.use(operationalRoutes());
  app.use(
    documentationRoutes(
      buildOpenApiDocument(API_ENDPOINTS, {
        prefix: API_PREFIX,
        serverUrl: config.baseUrl,
        webhookTimeoutMs: config.webhookTimeoutMs,
        webhookRetryDelaysMs: config.webhookRetryDelaysMs,
      }),
    ),
  );

  app.use(unknownRoute);
  app.use(errorHandler(logger));
  return app;
}
