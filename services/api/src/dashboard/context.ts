import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { authenticationRequired, type Config, type ServiceError } from '@retention/core';
import type { Db } from '@retention/db';
import {
  assertCan,
  isRemovedMemberSession,
  loadSession,
  userActor,
  type AccountUserRow,
  type Actor,
  type Permission,
  type SessionLifetimes,
  type SessionRow,
  type WebhookSender,
} from '@retention/domain';
import { throttledWarn, type Logger } from '@retention/runtime';
import type { GuessLimits } from './guess-limits.js';
import type { ManualSendLimit } from './manual-send-limit.js';
import { SessionCache } from './session-cache.js';
import type { TeamMailLimit } from './team-mail-limit.js';
import type { TrustedDevices } from './trusted-devices.js';
import { assertReadableBody } from './json-body.js';
import { readSessionCookie, type CookieSettings } from './session-cookie.js';

/** What every dashboard route needs; built once in router.ts. */
export interface DashboardContext {
  config: Config;
  db: Db;
  logger: Logger;
  /** Sign-in, links, password checks and reset emails, limited per account and address. */
  guessLimits: GuessLimits;
  /** Sends Send test and Resend attempts from the API process. */
  sender: WebhookSender;
  /** How many of those a workspace may send a minute. */
  manualSendLimit: ManualSendLimit;
  /** How many invitation and reset emails the Team page may send, per workspace and recipient. */
  teamMailLimit: TeamMailLimit;
  /** Tells every API process a token changed (see announceTokenChange in @retention/runtime). */
  announceTokenChange: () => Promise<void>;
  /**
   * Tells every API process that a session ended or its user changed (see announceSessionChange
   * in @retention/runtime): called after the change commits, before the answer, through
   * sessionsChanged (session-change.ts), which logs a failure rather than failing the request.
   */
  announceSessionChange: () => Promise<void>;
  /** The session epoch in Redis, which cached session look-ups are checked against. */
  sessionEpoch: () => Promise<string>;
  sessionCache: SessionCache;
  cookie: CookieSettings;
  /** Browsers that signed in before, and the cookie that says so (trusted-devices.ts). */
  trustedDevices: TrustedDevices;
  deviceCookie: CookieSettings;
  lifetimes: SessionLifetimes;
  /** Sends invitations, resets and alerts when SMTP_URL is set; null otherwise. */
  mailer: DashboardMailer | null;
}

/**
 * Emails that resolve whether they were sent: a failure is logged by the mailer, never fails the
 * request.
 */
export interface DashboardMailer {
  sendInvitation(to: string, input: { workspace_name: string; role: string; invite_url: string }): Promise<boolean>;
  sendPasswordReset(to: string, resetUrl: string): Promise<boolean>;
}

export interface SignedIn {
  session: SessionRow;
  user: AccountUserRow;
  workspaceId: string;
}

/**
 * The live session a cookie names: from this process's cache while the session epoch in Redis
 * is the one the entry was read under, else from PostgreSQL (loadSession, which also pushes the
 * idle expiry out). The epoch is read before PostgreSQL, so a change committed after that read
 * moves it again and the entry is not used. Without Redis nothing is served from the cache.
 * Nor is anything looked up before a clear() of the cache (a change that could not be
 * announced) served or cached after it: see SessionCache.generation.
 */
async function lookUpSession(
  context: DashboardContext,
  value: string,
  warn: ReturnType<typeof throttledWarn>,
): Promise<{ session: SessionRow; user: AccountUserRow } | null> {
  const { sessionCache: cache } = context;
  const key = SessionCache.key(value);
  const generation = cache.generation;
  const cached = cache.get(key);
  let epoch: string | undefined;
  try {
    epoch = await context.sessionEpoch();
  } catch (error) {
    warn('session-epoch', error, 'session epoch unavailable (Redis unreachable): sessions read from PostgreSQL');
  }
  if (cached && epoch !== undefined && cached.epoch === epoch && cache.generation === generation) return cached;
  if (cached) cache.delete(key);
  const loaded = await loadSession(context.db, value, context.lifetimes);
  if (loaded && epoch !== undefined) cache.set(key, { ...loaded, epoch }, generation);
  return loaded;
}

/** Loads the session the cookie names; 401 without a live one. */
export function requireSession(context: DashboardContext): RequestHandler {
  const warn = throttledWarn(context.logger);
  return async (req: Request, res: Response, next: NextFunction) => {
    const value = readSessionCookie(req, context.cookie);
    const loaded = value ? await lookUpSession(context, value, warn) : null;
    if (!loaded) return next(await noSessionRefusal(context, value));
    const { session, user } = loaded;
    res.locals.signedIn = { session, user, workspaceId: session.workspace_id } satisfies SignedIn;
    next();
  };
}

/**
 * Why there is no session: a person removed from the team since is told so (their session's hash
 * was kept, rememberRemovedSessions), anyone else that there is none or it ended. Looked up only
 * on a miss, which a signed-in page makes once.
 */
async function noSessionRefusal(context: DashboardContext, value: string | undefined): Promise<ServiceError> {
  if (value && (await isRemovedMemberSession(context.db, value))) {
    return authenticationRequired(
      'You were removed from this workspace, so your session ended. To come back, ask one of its owners or admins to invite you again.',
      { code: 'member_removed' },
    );
  }
  return authenticationRequired('Sign in to continue: there is no session, or it has ended.');
}

export function signedIn(res: Response): SignedIn {
  return res.locals.signedIn as SignedIn;
}

/**
 * Refuses with 403 unless the signed-in user's role has the permission (the role table); then,
 * and only then, a body that cannot be read (json-body.ts): whoever may not use the route is
 * told that, not what was wrong with what they sent.
 */
export function allow(permission: Permission): RequestHandler {
  return (req, res, next) => {
    assertCan(signedIn(res).user.role, permission, req.method === 'GET' || req.method === 'HEAD');
    assertReadableBody(req.body);
    next();
  };
}

export function requestOrigin(req: Request): { ip: string | null; user_agent: string | null } {
  return { ip: req.ip ?? null, user_agent: req.get('user-agent')?.slice(0, 512) ?? null };
}

/** The security log's actor for this request. */
export function actorOf(req: Request, res: Response): Actor {
  return userActor(signedIn(res).user, requestOrigin(req));
}
