import type { Request, Response } from 'express';
import { createSession, type AccountUserRow, type SessionRow } from '@retention/domain';
import { requestOrigin, type DashboardContext } from './context.js';
import { setSessionCookie } from './session-cookie.js';
import { signedInView } from './views.js';

/** Signs `user` in: a new session, its cookie, and the signed-in view (sign-in, and spending a link). */
export async function startSession(
  context: DashboardContext,
  req: Request,
  res: Response,
  user: AccountUserRow,
): Promise<void> {
  const session = await openSession(context, req, res, user);
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
