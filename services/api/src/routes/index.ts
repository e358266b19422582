import type { Router } from 'express';
import type { Db } from '@retention/db';
import { campaignRoutes, listCampaignsEndpoint, retrieveCampaignEndpoint } from './campaigns.js';
import { cancelSessionRoutes, listCancelSessionsEndpoint } from './cancel-sessions.js';
import { customerRoutes, listCustomersEndpoint, retrieveCustomerEndpoint } from './customers.js';
import type { Endpoint } from './endpoint.js';
import { retrieveStatsEndpoint, statsRoutes } from './stats.js';

/** The version prefix of every API endpoint (docs/api.md, "Basics"). */
export const API_PREFIX = '/api/v1';

/**
 * Sent on every answer under API_PREFIX, errors and unknown paths included, and on nothing
 * else of the service's routes: the SDK tells the API's error JSON from the same shape served by
 * something else at a wrong baseUrl (the dashboard's API answers `authentication_required` too).
 */
export const API_VERSION_HEADER = { name: 'Retention-Api-Version', value: '1' } as const;

/** Every endpoint under API_PREFIX, in the order the documentation lists them. */
export const API_ENDPOINTS: readonly Endpoint[] = [
  listCustomersEndpoint,
  retrieveCustomerEndpoint,
  listCampaignsEndpoint,
  retrieveCampaignEndpoint,
  listCancelSessionsEndpoint,
  retrieveStatsEndpoint,
];

export function apiRoutes(db: Db): Router[] {
  return [customerRoutes(db), campaignRoutes(db), cancelSessionRoutes(db), statsRoutes(db)];
}
