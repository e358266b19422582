import { Router } from 'express';
import type { Db } from '@retention/db';
import { createOperationalServer, LIVENESS_BODY, redisReadiness, type Redis } from '@retention/runtime';
import type { Server } from 'node:http';
import type { ApiMetrics } from '../metrics.js';

/**
 * Liveness on the public port, for load balancers: outside /api/v1, without authentication
 * or rate limit. Readiness (which names internal addresses when a dependency is down) and
 * Prometheus metrics are on API_INTERNAL_PORT only (createInternalServer), which is never
 * published (docs/decisions.md).
 */
export const PROBE_PATHS = ['/healthz'] as const;

export function operationalRoutes(): Router {
  const router = Router();
  router.use([...PROBE_PATHS], (_req, res, next) => {
    res.setHeader('Cache-Control', 'no-store');
    next();
  });

  router.get('/healthz', (_req, res) => {
    res.json(LIVENESS_BODY);
  });

  return router;
}

/** `/healthz`, `/readyz` and `/metrics` on API_INTERNAL_PORT, as the worker has them on WORKER_PORT. */
export function createInternalServer({ db, redis, metrics }: { db: Db; redis: Redis; metrics: ApiMetrics }): Server {
  return createOperationalServer({
    readiness: { postgres: () => db.raw('SELECT 1'), redis: redisReadiness(redis) },
    registry: metrics.registry,
  });
}
