import type { Router } from 'express';
import { StatsSchema } from '@retention/core';
import { computeStats, type Db } from '@retention/db';
import { NoQuery } from '../middleware/validate-query.js';
import { apiRouter } from './api-router.js';
import { serve, type Endpoint } from './endpoint.js';

export const retrieveStatsEndpoint = {
  operationId: 'retrieveStats',
  path: '/stats',
  tag: 'Statistics',
  summary: 'Retrieve statistics',
  description:
    'Recovery and cancel-flow KPIs of the workspace, the same numbers as the dashboard. ' +
    'Money is normalised to `display_currency`; rates are 0..1, rounded to 4 places, null when undefined.',
  query: NoQuery,
  returns: 'The statistics of the workspace.',
  response: StatsSchema,
} satisfies Endpoint<typeof NoQuery>;

export function statsRoutes(db: Db): Router {
  const router = apiRouter();
  serve(router, retrieveStatsEndpoint, ({ caller }) => computeStats(db, caller.workspaceId));
  return router;
}
