import { Router, type Request } from 'express';
import { ServiceError } from '@retention/core';
import {
  acceptInvitation,
  completePasswordReset,
  describeInvitation,
  describeResetLink,
  requestPasswordReset,
} from '@retention/domain';
import { requestOrigin, type DashboardContext } from './context.js';
import { readDeviceCookies } from './device-cookie.js';
import { bodyOf } from './json-body.js';
import { sessionsChanged } from './session-change.js';
import { startSession } from './start-session.js';

/** Invitation and password-reset links: no session needed; each spends its link and signs in. */
export function linkRoutes(context: DashboardContext): Router {
  const router = Router();
  /**
   * Spending a link is limited per address, and a link that is not valid counts as a failed guess.
   */
  const spendLink = async <T>(req: Request, spend: () => Promise<T>): Promise<T> => {
    await context.guessLimits.spendLink(req.ip);
    try {
      return await spend();
    } catch (error) {
      if (error instanceof ServiceError && error.type === 'not_found') await context.guessLimits.failed(req.ip);
      throw error;
    }
  };

  router.get('/invitations/:token', async (req, res) => {
    res.json(await describeInvitation(context.db, req.params.token));
  });

  router.post('/invitations/:token/accept', async (req, res) => {
    const body = bodyOf(req.body, ['name', 'password']);
    const user = await spendLink(req, () =>
      acceptInvitation(context.db, req.params.token, body as { name: string; password: string }, requestOrigin(req)),
    );
    // Accepted in a browser signed in as someone else (the page says so before): this browser
    // becomes the invited person's, and the session it held ends (startSession).
    await startSession(context, req, res, user);
  });

  // Whether this service sends email at all (a fact about the server, not about any address),
  // so Forgot password can say before asking for anything that no link will come by email.
  router.get('/password-reset', (_req, res) => {
    res.json({ object: 'password_reset_options', emails: context.mailer !== null });
  });

  router.post('/password-reset', (req, res) => {
    const { email } = bodyOf(req.body, ['email']);
    // Always 202, whether or not the address has an account: the answer must not say.
    // In the background too: the time to answer must not depend on whether it does.
    // Limited per account (per device from a trusted device of the account, as a stranger can
    // use up the account's) and per address: beyond, nothing is sent, the earlier link stays good.
    const { mailer } = context;
    if (mailer) {
      void context.guessLimits
        .mayEmailReset(email, req.ip, readDeviceCookies(req, context.deviceCookie))
        .then((allowed) => (allowed ? requestPasswordReset(context.db, email, context.config.baseUrl) : null))
        .then((link) => link && mailer.sendPasswordReset(link.user.email, link.reset_url))
        .catch((error: unknown) => context.logger.warn({ err: error }, 'password reset not sent'));
    }
    // `emailed` says whether this service sends email at all (a fact about the server, the
    // same for every address), so the page can tell someone without email whom to ask.
    res.status(202).json({ accepted: true, emailed: mailer !== null });
  });

  router.get('/password-reset/:token', async (req, res) => {
    res.json(await describeResetLink(context.db, req.params.token));
  });

  router.post('/password-reset/:token', async (req, res) => {
    const { password } = bodyOf(req.body, ['password']);
    const user = await spendLink(req, () =>
      completePasswordReset(context.db, req.params.token, password, requestOrigin(req)),
    );
    // Every other session of the user ended, and every device of the account is forgotten (a
    // cookie copied before the reset is worth nothing); this browser gets a new one.
    await sessionsChanged(context, { forgetDevicesOf: user.email });
    await startSession(context, req, res, user);
  });

  return router;
}
