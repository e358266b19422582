import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { authenticationRequired, type Config } from '@retention/core';
import type { Db } from '@retention/db';
import {
  assertCan,
  loadSession,
  userActor,
  type AccountUserRow,
  type Actor,
  type Permission,
  type SessionLifetimes,
  type SessionRow,
  type WebhookSender,
} from '@retention/domain';
import type { Logger } from '@retention/runtime';
import type { SlidingWindowRateLimiter } from '../rate-limiter.js';
import { readSessionCookie, type CookieSettings } from './session-cookie.js';

/** What every dashboard route needs; built once in router.ts. */
export interface DashboardContext {
  config: Config;
  db: Db;
  logger: Logger;
  limiter: SlidingWindowRateLimiter;
  /** Sends Send test and Resend attempts from the API process. */
  sender: WebhookSender;
  /** Tells every API process a token changed (see announceTokenChange in @retention/runtime). */
  announceTokenChange: () => Promise<void>;
  cookie: CookieSettings;
  lifetimes: SessionLifetimes;
  /** Sends invitations, resets and alerts when SMTP_URL is set; null otherwise. */
  mailer: DashboardMailer | null;
}

/** Fire-and-forget e-mails: a failure is logged by the mailer, never fails the request. */
export interface DashboardMailer {
  sendInvitation(to: string, input: { workspace_name: string; role: string; invite_url: string }): Promise<boolean>;
  sendPasswordReset(to: string, resetUrl: string): void;
}

export interface SignedIn {
  session: SessionRow;
  user: AccountUserRow;
  workspaceId: string;
}

/** Loads the session the cookie names; 401 without a live one. */
export function requireSession(context: DashboardContext): RequestHandler {
  return async (req: Request, res: Response, next: NextFunction) => {
    const value = readSessionCookie(req, context.cookie);
    const loaded = value ? await loadSession(context.db, value, context.lifetimes) : null;
    if (!loaded) return next(authenticationRequired('Sign in to continue: there is no session, or it has ended.'));
    res.locals.signedIn = { ...loaded, workspaceId: loaded.session.workspace_id } satisfies SignedIn;
    next();
  };
}

export function signedIn(res: Response): SignedIn {
  return res.locals.signedIn as SignedIn;
}

/** Refuses with 403 unless the signed-in user's role has the permission (the role table). */
export function allow(permission: Permission): RequestHandler {
  return (_req, res, next) => {
    assertCan(signedIn(res).user.role, permission);
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
