import { randomBytes } from 'node:crypto';
import { currentEpoch, newTokenEpoch, tokenEpochKey, type Redis } from '@retention/runtime';

/**
 * A true sliding one-minute window per key, decided atomically in Redis with Redis's own
 * clock. Each key is a sorted set of the accepted requests of the last window (score =
 * milliseconds); a request is accepted while fewer than `limit` remain in the window.
 * Rejected requests are not recorded, so calling while limited never extends the wait.
 *
 * An optional guard key (failed authentications of the client's address) is checked in the
 * same script: while it is full, the request is rejected whatever its own bucket says.
 *
 * The same script checks the token epoch first (see tokenEpochKey in @retention/runtime):
 * when the caller's cached epoch is not the current one, it counts nothing and answers the
 * current epoch, so the caller looks the token up again. ARGV[5] `*` skips the check; an
 * epoch that is missing (a Redis that lost its data) is created from ARGV[6].
 */
const SLIDING_WINDOW_SCRIPT = `
local epoch = redis.call('GET', KEYS[3])
if not epoch then
  epoch = ARGV[6]
  redis.call('SET', KEYS[3], epoch)
end
if ARGV[5] ~= '*' and ARGV[5] ~= epoch then
  return {-1, 0, 0, 0, 0, epoch}
end

local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local window = tonumber(ARGV[2])

local function oldestAge(key)
  local oldest = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
  if oldest[2] then return tonumber(oldest[2]) + window - now end
  return 0
end

local guardLimit = tonumber(ARGV[4])
if guardLimit > 0 then
  redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now - window)
  if redis.call('ZCARD', KEYS[2]) >= guardLimit then
    return {0, guardLimit, 0, oldestAge(KEYS[2]), 1, epoch}
  end
end

local limit = tonumber(ARGV[1])
if ARGV[7] == '1' then
  -- Two-bucket approximation: this fixed window's count plus the last one's, weighted by how
  -- much of it still overlaps the sliding window. Three fields, whatever the limit.
  local windowStart = now - (now % window)
  local state = redis.call('HMGET', KEYS[1], 'start', 'cur', 'prev')
  local start = tonumber(state[1]) or windowStart
  local cur = tonumber(state[2]) or 0
  local prev = tonumber(state[3]) or 0
  if start ~= windowStart then
    if start == windowStart - window then prev = cur else prev = 0 end
    cur = 0
  end
  local estimate = math.floor(prev * (window - (now - windowStart)) / window) + cur
  local reset = windowStart + window - now
  local allowed = 0
  if estimate < limit then
    cur = cur + 1
    allowed = 1
  end
  redis.call('HSET', KEYS[1], 'start', windowStart, 'cur', cur, 'prev', prev)
  redis.call('PEXPIRE', KEYS[1], window * 2)
  return {allowed, limit, math.max(0, limit - estimate - allowed), reset, 0, epoch}
end
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
local count = redis.call('ZCARD', KEYS[1])
if count < limit then
  redis.call('ZADD', KEYS[1], now, ARGV[3])
  redis.call('PEXPIRE', KEYS[1], window)
  return {1, limit, limit - count - 1, oldestAge(KEYS[1]), 0, epoch}
end
return {0, limit, 0, oldestAge(KEYS[1]), 0, epoch}
`;

/**
 * How many requests a sliding log holds in the window, counting nothing, and the milliseconds
 * until its oldest leaves it (0 when it holds none). With Redis's clock, as the script above.
 */
const WINDOW_COUNT_SCRIPT = `
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local window = tonumber(ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
local count = redis.call('ZCARD', KEYS[1])
local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
if oldest[2] then return {count, tonumber(oldest[2]) + window - now} end
return {count, 0}
`;

const ONE_MINUTE_MS = 60_000;

/**
 * Limits up to this are kept exactly, as a log of accepted requests (about 100 bytes of Redis
 * memory each: 1 MB for a token at 10,000 a minute). Above it, a log would grow with the limit
 * (a 1,000,000/min token: 100 MB), so the two-bucket approximation is used instead: three
 * numbers per token, exact at window boundaries and otherwise assuming the previous minute's
 * requests were spread evenly (Cloudflare's published error for this: about 0.003% of
 * requests wrongly allowed or refused).
 */
const EXACT_LIMIT_MAX = 10_000;

export interface RateLimitDecision {
  allowed: boolean;
  /** The ceiling that decided: the bucket's limit, or the guard's when the guard refused. */
  limit: number;
  remaining: number;
  /** Milliseconds until the oldest counted request leaves the window; 0 when none is counted. */
  resetMs: number;
  /** True when the guard (not the request's own bucket) refused it. */
  refusedByGuard: boolean;
}

/** The token epoch changed since the caller cached it: nothing was counted. */
export interface StaleEpoch {
  stale: true;
  /** The current epoch, to cache a fresh look-up under. */
  epoch: string;
}

interface ScriptedRedis extends Redis {
  slidingWindow(
    bucketKey: string,
    guardKey: string,
    epochKey: string,
    limit: number,
    windowMs: number,
    member: string,
    guardLimit: number,
    cachedEpoch: string,
    candidateEpoch: string,
    approximate: '0' | '1',
  ): Promise<[number, number, number, number, number, string]>;
  slidingWindowCount(bucketKey: string, windowMs: number): Promise<[number, number]>;
}

export class SlidingWindowRateLimiter {
  private readonly redis: ScriptedRedis;
  /**
   * Members of the sliding log must be unique within a window: a random prefix per process and
   * a counter, rather than random bytes per request (a system call on every request, measured
   * at about 17 µs of a list request's CPU).
   */
  private readonly memberPrefix = randomBytes(9).toString('base64url');
  private memberCount = 0;
  /** Becomes the epoch if Redis has none; replaced as soon as it has been used (a new epoch after each loss). */
  private candidateEpoch = newTokenEpoch();

  constructor(
    redis: Redis,
    private readonly keyPrefix: string,
    private readonly windowMs = ONE_MINUTE_MS,
    private readonly exactLimitMax = EXACT_LIMIT_MAX,
  ) {
    if (!('slidingWindow' in redis))
      redis.defineCommand('slidingWindow', { numberOfKeys: 3, lua: SLIDING_WINDOW_SCRIPT });
    if (!('slidingWindowCount' in redis))
      redis.defineCommand('slidingWindowCount', { numberOfKeys: 1, lua: WINDOW_COUNT_SCRIPT });
    this.redis = redis as ScriptedRedis;
  }

  /**
   * Counts one request against `bucket` if it fits in the window. With a guard, a full guard
   * refuses the request and nothing is counted. With `cachedEpoch`, nothing is counted either
   * when the token epoch has moved on: the answer is the current epoch instead.
   */
  async consume(
    bucket: string,
    limit: number,
    options: { guard?: { bucket: string; limit: number }; cachedEpoch?: string } = {},
  ): Promise<RateLimitDecision | StaleEpoch> {
    const { guard, cachedEpoch } = options;
    const candidateEpoch = this.candidateEpoch;
    this.memberCount += 1;
    const approximate = limit > this.exactLimitMax;
    const [allowed, appliedLimit, remaining, resetMs, byGuard, epoch] = await this.redis.slidingWindow(
      // Another key for the approximation: a token whose limit crosses the line changes type.
      this.key(approximate ? `${bucket}:approx` : bucket),
      this.key(guard?.bucket ?? bucket),
      tokenEpochKey(this.keyPrefix),
      limit,
      this.windowMs,
      `${this.memberPrefix}.${this.memberCount.toString(36)}`,
      guard?.limit ?? 0,
      cachedEpoch ?? '*',
      candidateEpoch,
      approximate ? '1' : '0',
    );
    if (epoch === candidateEpoch) this.candidateEpoch = newTokenEpoch();
    if (allowed === -1) return { stale: true, epoch };
    return {
      allowed: allowed === 1,
      limit: appliedLimit,
      remaining: Math.max(0, remaining),
      resetMs: Math.max(0, resetMs),
      refusedByGuard: byGuard === 1,
    };
  }

  /**
   * Whether `bucket` already holds `limit` requests in the window, counting nothing, and the
   * milliseconds until its oldest leaves it. For exact buckets only (limits up to
   * `exactLimitMax`): the approximation keeps no log to count.
   */
  async isFull(bucket: string, limit: number): Promise<{ full: boolean; resetMs: number }> {
    if (limit > this.exactLimitMax) throw new Error('isFull counts exact buckets only');
    const [count, resetMs] = await this.redis.slidingWindowCount(this.key(bucket), this.windowMs);
    return { full: count >= limit, resetMs: Math.max(0, resetMs) };
  }

  /** The current token epoch (made if Redis has none), counting nothing. */
  currentEpoch(): Promise<string> {
    return currentEpoch(this.redis, tokenEpochKey(this.keyPrefix));
  }

  private key(bucket: string): string {
    return `${this.keyPrefix}:ratelimit:${bucket}`;
  }
}
