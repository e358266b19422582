import { Router } from 'express';
import { loadFxRates, pageParams } from '@retention/db';
import {
  listSecurityEvents,
  processorConnectionStatus,
  SECURITY_LOG_FILTER_PARAMS,
  securityLogFilters,
  updateWorkspaceSettings,
} from '@retention/domain';
import { actorOf, allow, signedIn, type DashboardContext } from './context.js';
import { bodyOf } from './json-body.js';
import { workspaceView } from './views.js';
import { queryStrings } from './query-strings.js';

/** Workspace settings (owner changes) and the security log (owners and admins read). */
export function workspaceRoutes(context: DashboardContext): Router {
  const router = Router();
  const { db } = context;

  /**
   * With the processor connection's status, for every role: the page says in one sentence
   * whether the processor is connected and syncing (a member could read only half of it).
   */
  router.get('/workspace', async (_req, res) => {
    const { workspaceId } = signedIn(res);
    const [view, connectionStatus, rates] = await Promise.all([
      workspaceView(db, workspaceId),
      processorConnectionStatus(db, workspaceId),
      loadFxRates(db),
    ]);
    res.json({
      ...view,
      processor_connection_status: connectionStatus,
      // The codes the Display currency may be set to (those with an exchange rate), so the page
      // offers a choice rather than a free-text field that the server refuses afterwards.
      display_currencies: [...rates.keys()].sort(),
    });
  });

  router.patch('/workspace', allow('manage_workspace'), async (req, res) => {
    const body = bodyOf(req.body, ['name', 'display_currency']);
    const { workspaceId } = signedIn(res);
    await updateWorkspaceSettings(
      db,
      workspaceId,
      body as { name?: string; display_currency?: string },
      actorOf(req, res),
    );
    res.json(await workspaceView(db, workspaceId));
  });

  /** Filtered as docs/dashboard-api.md, "Security log", says; pages as the data pages' lists. */
  router.get('/security-log', allow('read_security_log'), async (req, res) => {
    const query = queryStrings(req.url, [...SECURITY_LOG_FILTER_PARAMS, 'limit', 'cursor']);
    const filters = securityLogFilters(query);
    res.json({
      object: 'list',
      ...(await listSecurityEvents(db, signedIn(res).workspaceId, { filters, ...pageParams(query) })),
    });
  });

  return router;
}
