import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from '@jest/globals';
import { createRedis, waitForRedis } from '@retention/runtime';
import { redisKeyPrefix, runId, TEST_REDIS_URL } from '@retention/testkit';
import { SlidingWindowRateLimiter, type RateLimitDecision } from '../src/rate-limiter.js';

const redis = createRedis(TEST_REDIS_URL, 'command', 'approx-test');
const prefix = `${redisKeyPrefix(runId())}-${randomBytes(4).toString('hex')}`;

afterAll(async () => {
  const keys = await redis.keys(`${prefix}:*`);
  if (keys.length > 0) await redis.del(...keys);
  redis.disconnect();
});

describe('limits above what a sliding log holds cheaply', () => {
  it('are counted in three numbers whatever the limit, and still enforced', async () => {
    await waitForRedis(redis);
    // A 10-minute window (no boundary mid-test), and "cheap" lowered to 50 so the test stays small.
    const limiter = new SlidingWindowRateLimiter(redis, prefix, 600_000, 50);
    const decisions: RateLimitDecision[] = [];
    for (let i = 0; i < 230; i += 1) decisions.push((await limiter.consume('token:big', 200)) as RateLimitDecision);
    expect(decisions.filter((decision) => decision.allowed)).toHaveLength(200);
    expect(decisions[199]).toMatchObject({ allowed: true, remaining: 0, limit: 200 });
    expect(decisions[200]).toMatchObject({ allowed: false, limit: 200 });
    expect(await redis.type(`${prefix}:ratelimit:token:big:approx`)).toBe('hash');
    expect(await redis.hlen(`${prefix}:ratelimit:token:big:approx`)).toBe(3);
    expect(await redis.exists(`${prefix}:ratelimit:token:big`)).toBe(0);

    // At or below the line: the exact log, one member per accepted request.
    for (let i = 0; i < 30; i += 1) await limiter.consume('token:small', 50);
    expect(await redis.type(`${prefix}:ratelimit:token:small`)).toBe('zset');
    expect(await redis.zcard(`${prefix}:ratelimit:token:small`)).toBe(30);
  });
});
