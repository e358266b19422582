import { Router } from 'express';
import { ServiceError } from '@retention/core';
import { checkCredentials } from '@retention/domain';
import type { DashboardContext } from './context.js';
import { readDeviceCookies } from './device-cookie.js';
import { assertReadableBody, bodyOf } from './json-body.js';
import { endSessionsNamedBy } from './session-change.js';
import { clearSessionCookie } from './session-cookie.js';
import { startSession } from './start-session.js';

export function sessionRoutes(context: DashboardContext): Router {
  const router = Router();

  /**
   * Each attempt counts against the account (by email, known or not) from this client address,
   * and is refused while the account's failures from all addresses or the address's failures
   * are full; each attempt is counted as a failure of both as it is admitted, and a success
   * takes that back. A trusted device of the account (its device
   * cookie) is not held by the account's failures (guess-limits.ts).
   */
  router.post('/session', async (req, res) => {
    const { email, password } = bodyOf(req.body, ['email', 'password']);
    const attempt = await context.guessLimits.signIn(email, req.ip, readDeviceCookies(req, context.deviceCookie));
    let user;
    try {
      user = await checkCredentials(context.db, email, password);
    } catch (error) {
      // Any other error (bad input, a database down) leaves the failure reserved: it was an
      // attempt, and taking it back would let errors be provoked to guess for free.
      if (error instanceof ServiceError && error.type === 'invalid_credentials')
        await context.guessLimits.signInFailed(attempt);
      throw error;
    } finally {
      await context.guessLimits.endCheck(attempt);
    }
    await context.guessLimits.signInSucceeded(attempt);
    await startSession(context, req, res, user);
  });

  router.delete('/session', async (req, res) => {
    assertReadableBody(req.body);
    // Every session its cookies name: sent twice, the cookie names no session for reading
    // (readSessionCookie), but the person asked to sign out (revokeSessionsNamedBy).
    await endSessionsNamedBy(context, req);
    clearSessionCookie(res, context.cookie);
    res.status(204).end();
  });

  return router;
}
