import { Router, type Request, type Response } from 'express';
import { markCampaignLost, markCampaignRecovered } from '@retention/domain';
import {
  computeOverview,
  parseOverviewPeriod,
  parseOverviewRange,
  type Overview,
  CAMPAIGN_EXPORT_COLUMNS,
  CAMPAIGN_FILTER_PARAMS,
  CAMPAIGN_SORTS,
  CANCEL_SESSION_EXPORT_COLUMNS,
  CANCEL_SESSION_FILTER_PARAMS,
  CANCEL_SESSION_SORTS,
  CUSTOMER_EXPORT_COLUMNS,
  CUSTOMER_FILTER_PARAMS,
  CUSTOMER_SORTS,
  campaignDetail,
  campaignListFilters,
  campaignListQuery,
  campaignSearchCustomers,
  cancelSessionListFilters,
  cancelSessionListQuery,
  customerListFilters,
  customerListQuery,
} from '@retention/db';
import { pathId } from '../middleware/validate-query.js';
import { ReadCoalescer } from './coalesce.js';
import { actorOf, allow, signedIn, type DashboardContext } from './context.js';
import { ExportSlots } from './export-slots.js';
import { exportFilename, exportZone, setCsvHeaders, streamCsv, type KeysetList } from './insights-export.js';
import { detailId } from './read-routes.js';
import { queryStrings } from './query-strings.js';

/**
 * The insight pages' data (docs/dashboard-api.md, "Insights"): the overview of a period, the
 * lists' CSV exports (campaigns, cancel sessions, customers) and the campaign actions. Mark recovered / Mark lost are the CLI's closing actions (the domain
 * checks the role again and writes the security log in the same transaction).
 */
export function insightsRoutes(context: DashboardContext): Router {
  const router = Router();
  const { db } = context;

  // Sessions of one workspace opening the overview at once share a read begun after each
  // arrived (coalesce.ts): as fresh as one read each, at the cost of two.
  const overviews = new ReadCoalescer<Overview>();
  router.get('/overview', async (req, res) => {
    const params = queryStrings(req.originalUrl, ['period', 'from', 'to']);
    const period = parseOverviewPeriod(params.period);
    const range = parseOverviewRange(period, params.from, params.to);
    const { workspaceId } = signedIn(res);
    const key = `${workspaceId}:${period}:${range ? `${range.from}:${range.to}` : ''}`;
    res.json(await overviews.run(key, () => computeOverview(db, workspaceId, period, new Date(), range)));
  });

  // Each export takes one of this process's slots (export-slots.ts) until it ends, is cut or its client goes.
  const exports = new ExportSlots();
  const exportCsv = async (
    req: Request,
    res: Response,
    list: KeysetList,
    columns: readonly string[],
    filename: string,
  ) => {
    // Express serves HEAD through the GET route and Node discards the body, whose every write
    // then succeeds at once: the whole list would be read in a tight loop for nothing. It gets
    // the GET's headers, or the GET's 429 while the slots are full, and takes no slot.
    if (req.method === 'HEAD') {
      exports.check(signedIn(res).workspaceId);
      setCsvHeaders(res, filename);
      res.end();
      return;
    }
    const release = exports.take(signedIn(res).workspaceId);
    try {
      await streamCsv(res, context.logger, list, columns, filename);
    } finally {
      release();
    }
  };

  /**
   * A list's export parameters: the list's own filters (`parse`, the list's parser), and `tz`, the
   * zone of the days its range is (or of the day exported), which names the file only
   * (docs/dashboard-api.md, "File names").
   */
  const exportParams = <Name extends string, Filters>(
    req: Request,
    names: readonly Name[],
    parse: (query: Partial<Record<Name, string>>) => Filters,
  ) => {
    // The parser reads its own names only: `tz` beside them is the file name's.
    const params = queryStrings<Name | 'tz'>(req.originalUrl, [...names, 'tz']);
    return { filters: parse(params), zone: exportZone(params.tz) };
  };

  router.get('/campaigns/export.csv', async (req, res) => {
    // The list's own filters and query (read-routes.ts), read page by page without a page size.
    const { filters, zone } = exportParams(req, CAMPAIGN_FILTER_PARAMS, campaignListFilters);
    // Named after what it holds: its status, decline category, currency, search and amounts (in
    // minor units, as the filter gives them), then its range of days or else the day it was
    // exported, in `tz`.
    const { status, decline_category, currency, q, min_amount, max_amount, from, to } = filters;
    const texts = [
      ['search', q],
      ['min', min_amount],
      ['max', max_amount],
    ] as const;
    const filename = exportFilename(
      'campaigns',
      { codes: [status, decline_category, currency], texts, from, to },
      zone,
    );
    const { workspaceId } = signedIn(res);
    // The search's customers once, for every page (campaign-list.ts, CampaignSearchCustomers).
    const customers = await campaignSearchCustomers(db, workspaceId, filters);
    const query = () => campaignListQuery(db, workspaceId, filters, 'columns', customers);
    const list = { query, order: CAMPAIGN_SORTS.order(filters), idColumn: 'k.id' };
    await exportCsv(req, res, list, CAMPAIGN_EXPORT_COLUMNS, filename);
  });

  router.get('/cancel_sessions/export.csv', async (req, res) => {
    const { filters, zone } = exportParams(req, CANCEL_SESSION_FILTER_PARAMS, cancelSessionListFilters);
    const { outcome, reason_code, q, from, to } = filters;
    const filename = exportFilename(
      'cancel-sessions',
      { codes: [outcome, reason_code], texts: [['search', q]], from, to },
      zone,
    );
    const { workspaceId } = signedIn(res);
    const query = () => cancelSessionListQuery(db, workspaceId, filters);
    const list = { query, order: CANCEL_SESSION_SORTS.order(filters), idColumn: 's.id' };
    await exportCsv(req, res, list, CANCEL_SESSION_EXPORT_COLUMNS, filename);
  });

  router.get('/customers/export.csv', async (req, res) => {
    const { filters, zone } = exportParams(req, CUSTOMER_FILTER_PARAMS, customerListFilters);
    const { email, tag, q } = filters;
    const texts = [
      ['email', email],
      ['tag', tag],
      ['search', q],
    ] as const;
    const filename = exportFilename('customers', { texts }, zone);
    const { workspaceId } = signedIn(res);
    const query = () => customerListQuery(db, workspaceId, filters);
    const list = { query, order: CUSTOMER_SORTS.order(filters), idColumn: 'id' };
    await exportCsv(req, res, list, CUSTOMER_EXPORT_COLUMNS, filename);
  });

  router.get('/campaigns/:id', async (req, res) => {
    queryStrings(req.originalUrl, []);
    res.json(await campaignDetail(db, signedIn(res).workspaceId, detailId(req.params.id, 'campaign')));
  });

  const mark = (action: typeof markCampaignRecovered) =>
    async function markCampaign(req: Request, res: Response) {
      const id = pathId(String(req.params.id));
      const { workspaceId, user } = signedIn(res);
      res.json(await action(db, { id, workspace_id: workspaceId, actor: { ...actorOf(req, res), user_id: user.id } }));
    };

  router.post('/campaigns/:id/mark-recovered', allow('manage_campaigns'), mark(markCampaignRecovered));
  router.post('/campaigns/:id/mark-lost', allow('manage_campaigns'), mark(markCampaignLost));
  return router;
}
