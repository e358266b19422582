import { Router } from 'express';
import type { Caller } from '../middleware/authenticate.js';
import { apiRoutes } from '../routes/index.js';
import { signedIn, type DashboardContext } from './context.js';

/**
 * The first dashboard's data: /stats, /campaigns, /customers, /cancel_sessions (and their
 * details) are /api/v1's own handlers, same filters and cursor, with the session's workspace
 * as the caller. Thin on purpose: richer lists will replace them.
 */
export function readRoutes(context: DashboardContext): Router {
  const router = Router();
  router.use((_req, res, next) => {
    res.locals.caller = { workspaceId: signedIn(res).workspaceId, tokenId: '' } satisfies Caller;
    next();
  });
  router.use(apiRoutes(context.db));
  return router;
}
