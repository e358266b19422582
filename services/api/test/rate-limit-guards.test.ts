import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createRedis, waitForRedis } from '@retention/runtime';
import { redisKeyPrefix, runId, TEST_REDIS_URL } from '@retention/testkit';
import { SlidingWindowRateLimiter, type RateLimitDecision } from '../src/rate-limiter.js';

const redis = createRedis(TEST_REDIS_URL, 'command', 'guards-test');
const prefix = `${redisKeyPrefix(runId())}-${randomBytes(4).toString('hex')}`;
const keyOf = (bucket: string) => `${prefix}:ratelimit:${bucket}`;
// Ten minutes: nothing leaves a window while the test runs.
const WINDOW_MS = 600_000;

beforeAll(() => waitForRedis(redis));
afterAll(async () => {
  const keys = await redis.keys(`${prefix}:*`);
  if (keys.length > 0) await redis.del(...keys);
  redis.disconnect();
});

/**
 * A MONITOR connection, as `redis.monitor()` makes one, but letting go of what ioredis wrongly
 * reports when the shared test Redis is busy: it marks the connection as monitoring only a
 * tick after MONITOR's OK, so other clients' commands logged in the same packet as that OK are
 * taken for replies to no command, each an "error" event ("Command queue state error"), which
 * rejected monitor() and, once its one listener was spent, was thrown as unhandled. Those
 * commands came before any the test watches; any other error still fails it.
 */
function startMonitor(): Promise<typeof redis> {
  const monitor = redis.duplicate({ monitor: true });
  return new Promise((resolve, reject) => {
    monitor.on('error', (error: Error) => {
      if (!error.message.startsWith('Command queue state error')) reject(error);
    });
    monitor.once('monitoring', () => resolve(monitor));
  });
}

const decided = async (answer: Promise<unknown>) => (await answer) as RateLimitDecision;

describe('guard windows', () => {
  it('refuse while any guard of the list is full, count nothing, and answer that guard', async () => {
    const limiter = new SlidingWindowRateLimiter(redis, prefix, WINDOW_MS);
    for (let i = 0; i < 3; i += 1) await limiter.consume('list:second', 3);
    await limiter.consume('list:first', 5);
    const guards = [
      { bucket: 'list:first', limit: 5 },
      { bucket: 'list:second', limit: 3 },
    ];

    const refused = await decided(limiter.consume('list:own', 10, { guards }));
    expect(refused).toMatchObject({ allowed: false, refusedByGuard: true, limit: 3, remaining: 0 });
    expect(refused.resetMs).toBeGreaterThan(WINDOW_MS - 60_000);
    expect(refused.resetMs).toBeLessThanOrEqual(WINDOW_MS);
    // Nothing counted: neither the bucket nor the guards (a guard is only read).
    expect(await redis.zcard(keyOf('list:own'))).toBe(0);
    expect(await redis.zcard(keyOf('list:first'))).toBe(1);
    expect(await redis.zcard(keyOf('list:second'))).toBe(3);

    // Without the full guard the bucket counts, under the other.
    const admitted = await decided(limiter.consume('list:own', 10, { guards: [guards[0]!] }));
    expect(admitted).toMatchObject({ allowed: true, refusedByGuard: false, limit: 10, remaining: 9 });
    expect(await redis.zcard(keyOf('list:own'))).toBe(1);

    // The first guard full refuses too, with its own limit, whatever follows it.
    for (let i = 0; i < 4; i += 1) await limiter.consume('list:first', 5);
    const byFirst = await decided(
      limiter.consume('list:own', 10, { guards: [guards[0]!, { bucket: 'list:empty', limit: 1 }] }),
    );
    expect(byFirst).toMatchObject({ allowed: false, refusedByGuard: true, limit: 5 });

    // The bucket's own limit still refuses, not as a guard.
    for (let i = 0; i < 9; i += 1)
      await limiter.consume('list:own', 10, { guards: [{ bucket: 'list:empty', limit: 1 }] });
    const byOwn = await decided(limiter.consume('list:own', 10, { guards: [{ bucket: 'list:empty', limit: 1 }] }));
    expect(byOwn).toMatchObject({ allowed: false, refusedByGuard: false, limit: 10 });
  });

  it('answer a stale token epoch before any guard, counting nothing', async () => {
    const limiter = new SlidingWindowRateLimiter(redis, prefix, WINDOW_MS);
    const epoch = await limiter.currentEpoch();
    await limiter.consume('epoch:guard', 1);
    const guards = [{ bucket: 'epoch:guard', limit: 1 }];
    expect(await limiter.consume('epoch:own', 5, { guards, cachedEpoch: 'not-the-epoch' })).toEqual({
      stale: true,
      epoch,
    });
    expect(await limiter.consume('epoch:own', 5, { guards, cachedEpoch: epoch })).toMatchObject({
      allowed: false,
      refusedByGuard: true,
    });
    expect(await limiter.consume('epoch:own', 5, { cachedEpoch: epoch })).toMatchObject({ allowed: true });
    expect(await redis.zcard(keyOf('epoch:own'))).toBe(1);
  });

  it('cost a request without guards one script call naming two keys, as before there were lists', async () => {
    const limiter = new SlidingWindowRateLimiter(redis, prefix, WINDOW_MS);
    await limiter.consume('hot:warm', 5); // the script loaded, so what follows is the steady state
    const monitor = await startMonitor();
    const seen: string[][] = [];
    monitor.on('monitor', (_time: string, args: string[], source: string) => {
      if (source !== 'lua' && args.some((arg) => arg.includes('hot:path'))) seen.push(args);
    });
    try {
      await limiter.consume('hot:path', 5);
      // MONITOR's feed trails the reply a little: a marker command after it arrives after it.
      await redis.get(keyOf('hot:path:marker'));
      await new Promise((resolve) => setTimeout(resolve, 200));
    } finally {
      monitor.disconnect();
    }
    const sent = seen.filter((args) => !args.some((arg) => arg.includes('marker')));
    expect(sent).toHaveLength(1);
    expect(sent[0]![0]!.toLowerCase()).toBe('evalsha');
    expect(sent[0]![2]).toBe('2');
    expect(sent[0]![3]).toBe(keyOf('hot:path'));
  });

  it('must be exact windows: a guard above the exact limit is a programming error', async () => {
    const limiter = new SlidingWindowRateLimiter(redis, prefix, WINDOW_MS, 50);
    await expect(limiter.consume('big:own', 5, { guards: [{ bucket: 'big:guard', limit: 51 }] })).rejects.toThrow(
      /exact/,
    );
  });
});
