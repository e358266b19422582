import type { Redis } from 'ioredis';
import { currentEpoch, newTokenEpoch } from './token-epoch.js';

/**
 * The session epoch: a Redis value that changes whenever a dashboard session ends or the user
 * behind one changes (sign out, sign out everywhere, a password change or reset, a role or
 * name change, removal from the team). API processes cache session look-ups and use an entry
 * only while the epoch is still the one it was read under, so such a change reaches every API
 * process on its very next request. One value for all sessions: these changes are a person's
 * clicks, rare beside requests, and a change only sends each process back to PostgreSQL once
 * per live session. Random values, as the token epoch's, so a Redis that loses its data cannot
 * bring back an epoch that stale entries would still match.
 */
export function sessionEpochKey(keyPrefix: string): string {
  return `${keyPrefix}:sessions:epoch`;
}

/** Tells every API process that the session look-ups they cached are out of date. */
export async function announceSessionChange(redis: Redis, keyPrefix: string): Promise<void> {
  await redis.set(sessionEpochKey(keyPrefix), newTokenEpoch());
}

/** The current session epoch; made when Redis has none (first use, or a Redis that lost its data). */
export function currentSessionEpoch(redis: Redis, keyPrefix: string): Promise<string> {
  return currentEpoch(redis, sessionEpochKey(keyPrefix));
}
