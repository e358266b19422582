import type { Request, Response } from 'express';
import { createSession, type AccountUserRow } from '@retention/domain';
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
  const { value, session } = await createSession(
    context.db,
    { user_id: user.id, workspace_id: user.workspace_id, ...requestOrigin(req) },
    context.lifetimes,
  );
  setSessionCookie(res, context.cookie, value, session.expires_at);
  res.json(await signedInView(context.db, { ...user, last_sign_in_at: session.created_at }));
}
