import { Router } from 'express';
import type { Db } from '@retention/db';
import { computeStats } from '@retention/domain';
import { callerOf } from '../middleware/authenticate.js';
import { NoQuery, validateQuery } from '../middleware/validate-query.js';

export function statsRoutes(db: Db): Router {
  const router = Router();
  router.get('/stats', validateQuery(NoQuery), async (_req, res) => {
    res.json(await computeStats(db, callerOf(res).workspaceId));
  });
  return router;
}
