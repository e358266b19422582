import { Router } from 'express';
import {
  changePassword,
  describeUserAgent,
  listOwnSessions,
  permissionsFor,
  resetLinkRoles,
  signOutEverywhere,
  signOutOtherSession,
  updateProfile,
} from '@retention/domain';
import { actorOf, signedIn, type DashboardContext } from './context.js';
import { assertReadableBody, bodyOf } from './json-body.js';
import { openSession, trustDevice } from './start-session.js';
import { sessionsChanged } from './session-change.js';
import { clearSessionCookie } from './session-cookie.js';
import { EVENT_TYPE_LIST, signedInView } from './views.js';

/** GET /me and the account page: name, password, sessions (each, or everywhere). */
export function accountRoutes(context: DashboardContext): Router {
  const router = Router();

  router.get('/me', async (_req, res) => {
    const { user } = signedIn(res);
    res.json({
      ...(await signedInView(context.db, user)),
      permissions: {
        ...permissionsFor(user.role),
        reset_link_roles: resetLinkRoles(user.role, context.mailer !== null),
      },
      event_types: EVENT_TYPE_LIST,
    });
  });

  router.patch('/account', async (req, res) => {
    const body = bodyOf(req.body, ['name']);
    const user = await updateProfile(context.db, signedIn(res).user.id, body as { name: string });
    // The name is part of the cached look-up of this user's sessions.
    await sessionsChanged(context);
    res.json({ user });
  });

  router.post('/account/password', async (req, res) => {
    const body = bodyOf(req.body, ['current_password', 'new_password']);
    const { user, workspaceId } = signedIn(res);
    await context.guessLimits.checkPassword(user.id, req.ip);
    await changePassword(
      context.db,
      {
        user_id: user.id,
        workspace_id: workspaceId,
        current_password: body.current_password,
        new_password: body.new_password,
      },
      actorOf(req, res),
    );
    // Every device of the account is forgotten: a cookie copied before the change is worth
    // nothing now. This browser proved the password, so it is trusted again, as a new device.
    await sessionsChanged(context, { forgetDevicesOf: user.email });
    await trustDevice(context, req, res, user.email);
    // Every session ended, this one too: the browser goes on under a new one.
    await openSession(context, req, res, user);
    res.status(204).end();
  });

  router.post('/account/sign-out-everywhere', async (req, res) => {
    assertReadableBody(req.body);
    const { user, workspaceId } = signedIn(res);
    await signOutEverywhere(
      context.db,
      { user_id: user.id, workspace_id: workspaceId, email: user.email },
      actorOf(req, res),
    );
    await sessionsChanged(context);
    clearSessionCookie(res, context.cookie);
    res.status(204).end();
  });

  // The signed-in user's own live sessions, newest activity first: never a cookie or its hash.
  router.get('/account/sessions', async (_req, res) => {
    const { user, session } = signedIn(res);
    const sessions = await listOwnSessions(context.db, user.id);
    res.json({
      object: 'list',
      data: sessions.map((row) => ({
        object: 'session',
        id: row.id,
        created_at: row.created_at.toISOString(),
        last_seen_at: row.last_seen_at.toISOString(),
        device: describeUserAgent(row.user_agent),
        ip_address: row.ip_address,
        current: row.id === session.id,
      })),
    });
  });

  // Ends one other session of one's own. Like sign out everywhere, every API process is told
  // (sessionsChanged), so a look-up it cached is not used on that session's next request.
  router.post('/account/sessions/:id/revoke', async (req, res) => {
    assertReadableBody(req.body);
    const { user, session, workspaceId } = signedIn(res);
    await signOutOtherSession(
      context.db,
      {
        user_id: user.id,
        workspace_id: workspaceId,
        email: user.email,
        session_id: String(req.params.id),
        current_session_id: session.id,
      },
      actorOf(req, res),
    );
    await sessionsChanged(context);
    res.status(204).end();
  });

  return router;
}
