import { createHash } from 'node:crypto';
import { Router } from 'express';
import { ServiceError } from '@retention/core';
import { checkCredentials, loadSession, revokeSession } from '@retention/domain';
import { addressBucket } from './client-address.js';
import type { DashboardContext } from './context.js';
import { bodyOf } from './json-body.js';
import { clearSessionCookie, readSessionCookie } from './session-cookie.js';
import { startSession } from './start-session.js';

/** Failed sign-ins allowed in SIGN_IN_WINDOW_MS, per account and per client address. */
const SIGN_IN_LIMIT_PER_ACCOUNT = 10;
const SIGN_IN_LIMIT_PER_ADDRESS = 50;
export const SIGN_IN_WINDOW_MS = 15 * 60_000;

const tooMany = () =>
  new ServiceError('rate_limit_exceeded', 'Too many sign-in attempts. Wait a few minutes and try again.');

export function sessionRoutes(context: DashboardContext, signInLimiter: DashboardContext['limiter']): Router {
  const router = Router();

  /**
   * Each attempt counts against the account (by e-mail, known or not) and is refused while the
   * address's window of failures is full; a failure also counts against the address.
   */
  router.post('/session', async (req, res) => {
    const { email, password } = bodyOf(req.body, ['email', 'password']);
    // Hashed: the window's Redis key need not spell out who is being tried.
    const typed = typeof email === 'string' ? email.toLowerCase().slice(0, 320) : '';
    const account = `signin-account:${createHash('sha256').update(typed).digest('base64url')}`;
    const address = `signin-address:${addressBucket(req.ip)}`;
    const decision = await signInLimiter.consume(account, SIGN_IN_LIMIT_PER_ACCOUNT, {
      guard: { bucket: address, limit: SIGN_IN_LIMIT_PER_ADDRESS },
    });
    if ('stale' in decision) throw new Error('sign-in limiter answered an epoch');
    if (!decision.allowed) {
      res.setHeader('Retry-After', String(Math.max(1, Math.ceil(decision.resetMs / 1000))));
      throw tooMany();
    }
    let user;
    try {
      user = await checkCredentials(context.db, email, password);
    } catch (error) {
      if (error instanceof ServiceError && error.type === 'invalid_credentials') {
        await signInLimiter.consume(address, SIGN_IN_LIMIT_PER_ADDRESS);
      }
      throw error;
    }
    await startSession(context, req, res, user);
  });

  router.delete('/session', async (req, res) => {
    const value = readSessionCookie(req, context.cookie);
    const loaded = value ? await loadSession(context.db, value, context.lifetimes) : null;
    if (loaded) {
      await revokeSession(context.db, loaded.session.id);
      await context.announceSessionChange();
    }
    clearSessionCookie(res, context.cookie);
    res.status(204).end();
  });

  return router;
}
