import type { Request } from 'express';
import { revokeSessionsNamedBy } from '@retention/domain';
import type { DashboardContext } from './context.js';
import { readCookies } from './session-cookie.js';

/**
 * What follows every committed change that ends sessions or changes the user behind them: every
 * API process is told (the session epoch, context.announceSessionChange), and when the change
 * takes the account from whoever held it (a password changed or reset, a removal from the
 * team), the account's trusted devices are forgotten, so a device cookie copied before is worth
 * nothing (trusted-devices.ts).
 *
 * Both are best effort, logged when Redis fails them: the change is saved, and answering that
 * it failed would send the person back to retry it, with a password that no longer works. The
 * sessions it ended stay ended: PostgreSQL says so to any process that cannot read the epoch,
 * this process drops every look-up it cached and will not cache or serve one that was in flight
 * across the drop (SessionCache.generation), and another process that still reads the old
 * epoch uses an entry at most SESSION_CACHE_LIFETIME_MS after reading it from PostgreSQL
 * (docs/dashboard-api.md, "Sessions").
 */
export async function sessionsChanged(
  context: DashboardContext,
  change: { forgetDevicesOf?: string } = {},
): Promise<void> {
  try {
    await context.announceSessionChange();
  } catch (error) {
    context.sessionCache.clear();
    context.logger.warn(
      { err: error },
      'session change not announced (Redis failed): other API processes may use a cached look-up of an ended session for up to 10 s',
    );
  }
  if (change.forgetDevicesOf === undefined) return;
  try {
    await context.trustedDevices.forgetAll(change.forgetDevicesOf);
  } catch (error) {
    context.logger.warn(
      { err: error },
      'trusted devices not forgotten (Redis failed): device cookies issued before the change stay trusted until they expire',
    );
  }
}

/**
 * Ends every live session the request's session cookies name, and tells every API process when
 * there was one. Signing out, and every sign-in (startSession): a browser that signs in again,
 * as anyone, has its session replaced, and the one it held must not stay valid behind the new
 * cookie, where a copy of the old value would keep working.
 */
export async function endSessionsNamedBy(context: DashboardContext, req: Request): Promise<void> {
  const ended = await revokeSessionsNamedBy(context.db, readCookies(req, context.cookie.name));
  if (ended > 0) await sessionsChanged(context);
}
