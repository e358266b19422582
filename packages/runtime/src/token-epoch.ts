import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';

/**
 * The token epoch: a Redis value that changes whenever a token's revocation or rate limit
 * does. API processes cache token look-ups and check, in the same Redis script that counts
 * each request, that the epoch is still the one they cached under; so a revocation reaches
 * every API process on its very next request. Random values rather than a counter: a Redis
 * that loses its data cannot bring back an old epoch that stale caches would still match.
 */
export function tokenEpochKey(keyPrefix: string): string {
  return `${keyPrefix}:tokens:epoch`;
}

/** Tells every API process that token look-ups they cached are out of date. */
export async function announceTokenChange(redis: Redis, keyPrefix: string): Promise<void> {
  await redis.set(tokenEpochKey(keyPrefix), newTokenEpoch());
}

export function newTokenEpoch(): string {
  return randomBytes(12).toString('base64url');
}

/**
 * The current value of an epoch key (the token or the session epoch); made when Redis has none
 * (first use, or a Redis that lost its data). Two processes making it at once agree: the
 * first write wins and both read it back.
 */
export async function currentEpoch(redis: Redis, key: string): Promise<string> {
  const epoch = await redis.get(key);
  if (epoch !== null) return epoch;
  await redis.set(key, newTokenEpoch(), 'NX');
  const made = await redis.get(key);
  if (made === null) throw new Error(`the epoch ${key} vanished as it was made`);
  return made;
}
