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
