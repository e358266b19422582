import { Router, type RequestHandler } from 'express';
import { errorBody, type Config } from '@retention/core';
import type { Db } from '@retention/db';
import { createWebhookSender, webhookSenderOptions, type WebhookSender } from '@retention/domain';
import {
  announceSessionChange,
  announceTokenChange,
  createMailer,
  currentSessionEpoch,
  type Logger,
  type Mailer,
  type Redis,
} from '@retention/runtime';
import { accountRoutes } from './account-routes.js';
import { requireSession, type DashboardContext } from './context.js';
import { errorDetails } from './error-details.js';
import { GuessLimits } from './guess-limits.js';
import { ManualSendLimit } from './manual-send-limit.js';
import { TeamMailLimit } from './team-mail-limit.js';
import { insightsRoutes } from './insights-routes.js';
import { jsonBody } from './json-body.js';
import { linkRoutes } from './link-routes.js';
import { dashboardMailer } from './mail.js';
import { originCheck } from './origin-check.js';
import { processorRoutes } from './processor-routes.js';
import { countRoutes, readRoutes } from './read-routes.js';
import { SessionCache } from './session-cache.js';
import { cookieSettings } from './session-cookie.js';
import { deviceCookieSettings } from './device-cookie.js';
import { TrustedDevices } from './trusted-devices.js';
import { sessionRoutes } from './session-routes.js';
import { teamRoutes } from './team-routes.js';
import { tokenRoutes } from './token-routes.js';
import { webhookRoutes } from './webhook-routes.js';
import { workspaceRoutes } from './workspace-routes.js';

export const DASHBOARD_API_PREFIX = '/dashboard/api';

/** Every route pattern, for the request metrics' `route` label (never a raw id or token). */
export const DASHBOARD_ROUTE_PATTERNS = [
  '/session',
  '/me',
  '/account',
  '/account/password',
  '/account/sign-out-everywhere',
  '/invitations/:token',
  '/invitations/:token/accept',
  '/password-reset',
  '/password-reset/:token',
  '/team',
  '/team/invitations',
  '/team/invitations/:id',
  '/team/invitations/:id/new-link',
  '/team/members/:id',
  '/team/members/:id/reset-link',
  '/tokens',
  '/tokens/:id/revoke',
  '/webhooks',
  '/webhooks/:id',
  '/webhooks/:id/:action',
  '/webhooks/:id/deliveries',
  '/deliveries/:id/resend',
  '/workspace',
  '/security-log',
  '/processor',
  '/processor/:action',
  '/stats',
  '/campaigns',
  '/campaigns/export.csv',
  '/campaigns/count',
  '/campaigns/:id',
  '/customers',
  '/customers/export.csv',
  '/customers/count',
  '/customers/:id',
  '/cancel_sessions',
  '/cancel_sessions/export.csv',
  '/cancel_sessions/count',
  '/cancel_sessions/:id',
  '/overview',
  '/campaigns/:id/mark-recovered',
  '/campaigns/:id/mark-lost',
].map((pattern) => `${DASHBOARD_API_PREFIX}${pattern}`);

export interface DashboardDependencies {
  config: Config;
  db: Db;
  redis: Redis;
  logger: Logger;
  sender?: WebhookSender;
  /** Email; made from SMTP_URL when not given (none when it is unset). */
  mailer?: Mailer | null;
}

const noStore: RequestHandler = (_req, res, next) => {
  res.setHeader('Cache-Control', 'no-store');
  next();
};

const unknownDashboardRoute: RequestHandler = (req, res) => {
  res.status(404).json(errorBody('not_found', `Unrecognized request URL (${req.method} ${req.baseUrl}${req.path}).`));
};

/** The dashboard's JSON API (docs/dashboard-api.md), mounted at DASHBOARD_API_PREFIX. */
export function dashboardApi(deps: DashboardDependencies): Router {
  const { config, db, redis, logger } = deps;
  const lifetimes = { idleMs: config.sessionIdleTimeoutMs, maxAgeMs: config.sessionMaxAgeMs };
  const trustedDevices = new TrustedDevices(redis, config.redisKeyPrefix);
  const cookie = cookieSettings(config.baseUrl);
  const context: DashboardContext = {
    config,
    db,
    logger,
    guessLimits: new GuessLimits(redis, config.redisKeyPrefix, trustedDevices),
    sender: deps.sender ?? createWebhookSender(webhookSenderOptions(config)),
    manualSendLimit: new ManualSendLimit(redis, config.redisKeyPrefix),
    teamMailLimit: new TeamMailLimit(redis, config.redisKeyPrefix),
    announceTokenChange: () => announceTokenChange(redis, config.redisKeyPrefix),
    announceSessionChange: () => announceSessionChange(redis, config.redisKeyPrefix),
    sessionEpoch: () => currentSessionEpoch(redis, config.redisKeyPrefix),
    sessionCache: new SessionCache(lifetimes),
    cookie,
    trustedDevices,
    deviceCookie: deviceCookieSettings(cookie),
    lifetimes,
    mailer: dashboardMailer(deps.mailer === undefined ? createMailer(config, logger) : deps.mailer),
  };

  const router = Router();
  router.use(noStore);
  router.use(originCheck(config.baseUrl));
  router.use(jsonBody);
  router.use(sessionRoutes(context));
  router.use(linkRoutes(context));
  router.use(requireSession(context));
  router.use(accountRoutes(context));
  router.use(teamRoutes(context));
  router.use(tokenRoutes(context));
  router.use(webhookRoutes(context));
  router.use(workspaceRoutes(context));
  router.use(processorRoutes(context));
  router.use(countRoutes(context));
  router.use(insightsRoutes(context));
  router.use(readRoutes(context));
  router.use(unknownDashboardRoute);
  router.use(errorDetails);
  return router;
}
