import { Router } from 'express';
import type { Db } from '@retention/db';
import { checkReadiness, LIVENESS_BODY, renderMetrics, type Redis } from '@retention/runtime';
import type { ApiMetrics } from '../metrics.js';

/**
 * The endpoints of the people and machines that run the service: liveness, readiness and
 * Prometheus metrics. They sit outside /api/v1, without authentication or rate limit, and
 * are meant for the internal network only (docs/decisions.md).
 */
export const PROBE_PATHS = ['/healthz', '/readyz', '/metrics'] as const;

interface OperationalDependencies {
  db: Db;
  redis: Redis;
  metrics: ApiMetrics;
}

export function operationalRoutes({ db, redis, metrics }: OperationalDependencies): Router {
  const router = Router();
  router.use([...PROBE_PATHS], (_req, res, next) => {
    res.setHeader('Cache-Control', 'no-store');
    next();
  });

  router.get('/healthz', (_req, res) => {
    res.json(LIVENESS_BODY);
  });

  router.get('/readyz', async (_req, res) => {
    const report = await checkReadiness({
      postgres: () => db.raw('SELECT 1'),
      redis: () => redis.ping(),
    });
    res.status(report.status === 'ready' ? 200 : 503).json(report);
  });

  router.get('/metrics', async (_req, res) => {
    const page = await renderMetrics(metrics.registry);
    res.setHeader('Content-Type', page.contentType);
    res.send(page.body);
  });

  return router;
}
