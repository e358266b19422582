import { Router, type Response } from 'express';
import { isUuid, notFound } from '@retention/core';
import {
  CAMPAIGN_FILTER_PARAMS,
  CANCEL_SESSION_FILTER_PARAMS,
  CUSTOMER_FILTER_PARAMS,
  campaignListCount,
  campaignListFilters,
  campaignListPage,
  cancelSessionDetailView,
  cancelSessionListCount,
  cancelSessionListFilters,
  cancelSessionListPage,
  customerDetailView,
  customerListCount,
  customerListFilters,
  customerListPage,
  computeStats,
  pageParams,
  type JsonText,
} from '@retention/db';
import { signedIn, type DashboardContext } from './context.js';
import { queryStrings } from './query-strings.js';

/**
 * The data pages (docs/dashboard-api.md, "Data pages"): /stats is /api/v1/stats's answer; the
 * lists are the dashboard's own (more filters, `limit`, an opaque keyset cursor bound to the
 * list and its filters), each sharing its filter parser and query with its CSV export
 * (insights-routes.ts); the details add what their pages show.
 */
export function readRoutes(context: DashboardContext): Router {
  const router = Router();
  const { db } = context;

  router.get('/stats', async (req, res) => {
    queryStrings(req.originalUrl, []);
    res.json(await computeStats(db, signedIn(res).workspaceId));
  });

  router.get('/campaigns', async (req, res) => {
    const query = queryStrings(req.originalUrl, [...CAMPAIGN_FILTER_PARAMS, 'limit', 'cursor']);
    const filters = campaignListFilters(query);
    sendJsonText(res, await campaignListPage(db, signedIn(res).workspaceId, filters, pageParams(query)));
  });

  router.get('/customers', async (req, res) => {
    const query = queryStrings(req.originalUrl, [...CUSTOMER_FILTER_PARAMS, 'limit', 'cursor']);
    const filters = customerListFilters(query);
    sendJsonText(res, await customerListPage(db, signedIn(res).workspaceId, filters, pageParams(query)));
  });

  router.get('/cancel_sessions', async (req, res) => {
    const query = queryStrings(req.originalUrl, [...CANCEL_SESSION_FILTER_PARAMS, 'limit', 'cursor']);
    const filters = cancelSessionListFilters(query);
    sendJsonText(res, await cancelSessionListPage(db, signedIn(res).workspaceId, filters, pageParams(query)));
  });

  router.get('/customers/:id', async (req, res) => {
    queryStrings(req.originalUrl, []);
    const id = detailId(req.params.id, 'customer');
    sendJsonText(res, await customerDetailView(db, signedIn(res).workspaceId, id));
  });

  router.get('/cancel_sessions/:id', async (req, res) => {
    queryStrings(req.originalUrl, []);
    const id = detailId(req.params.id, 'cancel session');
    sendJsonText(res, await cancelSessionDetailView(db, signedIn(res).workspaceId, id));
  });

  return router;
}

/**
 * How many rows a list's filters match (docs/dashboard-api.md, "Counts"), at most 1,000 counted:
 * asked by a page beside its list's first page when that is not the whole list, so the list never
 * waits for its count. Mounted before the detail routes, whose `:id` would take `count`.
 */
export function countRoutes(context: DashboardContext): Router {
  const router = Router();
  const { db } = context;
  router.get('/campaigns/count', async (req, res) => {
    const filters = campaignListFilters(queryStrings(req.originalUrl, CAMPAIGN_FILTER_PARAMS));
    sendJsonText(res, await campaignListCount(db, signedIn(res).workspaceId, filters));
  });
  router.get('/customers/count', async (req, res) => {
    const filters = customerListFilters(queryStrings(req.originalUrl, CUSTOMER_FILTER_PARAMS));
    sendJsonText(res, await customerListCount(db, signedIn(res).workspaceId, filters));
  });
  router.get('/cancel_sessions/count', async (req, res) => {
    const filters = cancelSessionListFilters(queryStrings(req.originalUrl, CANCEL_SESSION_FILTER_PARAMS));
    sendJsonText(res, await cancelSessionListCount(db, signedIn(res).workspaceId, filters));
  });
  return router;
}

/** JSON text Postgres built, written as it is (as /api/v1's lists are). */
function sendJsonText(res: Response, body: JsonText<unknown>): void {
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.end(body.text);
}

/** A detail page's `:id`: a UUID (any case), else not found, like another workspace's id. */
export function detailId(value: unknown, what: string): string {
  if (isUuid(value)) return value.toLowerCase();
  throw notFound(`No ${what} with id ${JSON.stringify(String(value).slice(0, 60))}`);
}
