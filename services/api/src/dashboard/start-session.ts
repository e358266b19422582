import type { Request, Response } from 'express';
import { createSession, type AccountUserRow, type SessionRow } from '@retention/domain';
import { requestOrigin, type DashboardContext } from './context.js';
import { readDeviceCookies, setDeviceCookie } from './device-cookie.js';
import { endSessionsNamedBy } from './session-change.js';
import { setSessionCookie } from './session-cookie.js';
import { signedInView } from './views.js';

/**
 * Signs `user` in: a new session, its cookie, a new device cookie, and the signed-in view
 * (sign-in, and spending a link: a reset link proves the account as well as a password does).
 * The session this browser held, whoever's it was (the same person's too), ends first: the new
 * one replaces it, and a copy of the old cookie must not outlive it.
 */
export async function startSession(
  context: DashboardContext,
  req: Request,
  res: Response,
  user: AccountUserRow,
): Promise<void> {
  await endSessionsNamedBy(context, req);
  const session = await openSession(context, req, res, user);
  await trustDevice(context, req, res, user.email);
  res.json(await signedInView(context.db, { ...user, last_sign_in_at: session.created_at }));
}

/** A new session for `user`, its cookie set on `res` (a changed password replaces the session in use). */
export async function openSession(
  context: DashboardContext,
  req: Request,
  res: Response,
  user: Pick<AccountUserRow, 'id' | 'workspace_id'>,
): Promise<SessionRow> {
  const { value, session } = await createSession(
    context.db,
    { user_id: user.id, workspace_id: user.workspace_id, ...requestOrigin(req) },
    context.lifetimes,
  );
  setSessionCookie(res, context.cookie, value, session.expires_at);
  return session;
}

/**
 * Gives the browser a new device cookie for the account, forgetting the one it sent. Without
 * it the person is still signed in: only their next sign-in is a stranger's, so a Redis that
 * fails here does not fail the sign-in (logged without the value).
 */
export async function trustDevice(
  context: DashboardContext,
  req: Request,
  res: Response,
  email: string,
): Promise<void> {
  try {
    const value = await context.trustedDevices.issue(email, readDeviceCookies(req, context.deviceCookie));
    setDeviceCookie(res, context.deviceCookie, value);
  } catch (error) {
    context.logger.warn({ err: error }, 'device cookie not issued');
  }
}
