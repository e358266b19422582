import { Router } from 'express';

/**
 * A router for /api/v1 and its endpoints. Express matches paths case-insensitively and with an
 * optional trailing slash by default, so `/api/v1/Campaigns` and `/api/v1/campaigns/` answered
 * 200; an API answers 404 for any path it does not define (docs/api.md, "Basics"). The
 * options are per router, so the dashboard's routes and the probes keep Express's defaults.
 */
export function apiRouter(): Router {
  return Router({ caseSensitive: true, strict: true });
}
