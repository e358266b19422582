import { randomBytes } from 'node:crypto';
import { currentEpoch, newTokenEpoch, tokenEpochKey, type Redis } from '@retention/runtime';

/**
 * A true sliding one-minute window per key, decided atomically in Redis with Redis's own
 * clock. Each key is a sorted set of the accepted requests of the last window (score =
 * milliseconds); a request is accepted while fewer than `limit` remain in the window.
 * Rejected requests are not recorded, so calling while limited never extends the wait.
 *
 * Guard windows (KEYS[3..], their limits ARGV[7..]) are checked first, in the same script: while
 * any of them is full the request is refused, whatever its own bucket says, and nothing is
 * counted. A guard is only read (trimmed and counted), never added to: its requests are counted
 * by their own consume (a failed authentication, say). Without guards the loop does nothing,
 * so the API's hot path pays nothing for them.
 *
 * A guard may instead be reserved (its flag, ARGV[7 + guards + position], is '1'): when the
 * request is allowed, the same member is added to it too, in the same script. A failure counted
 * only once its outcome is known lets every request already in flight past a nearly full guard
 * (a burst of sign-ins, each waiting for its password hash); a reservation is counted at
 * admission, and the caller takes it back (`release`) when the request turns out to succeed.
 *
 * The same script checks the token epoch first (see tokenEpochKey in @retention/runtime):
 * when the caller's cached epoch is not the current one, it counts nothing and answers the
 * current epoch, so the caller looks the token up again. ARGV[4] `*` skips the check; an
 * epoch that is missing (a Redis that lost its data) is created from ARGV[5].
 *
 * The answer: {allowed, limit, remaining, resetMs, refusing guard's position (0: none), epoch}.
 */
const SLIDING_WINDOW_SCRIPT = `
local epoch = redis.call('GET', KEYS[2])
if not epoch then
  epoch = ARGV[5]
  redis.call('SET', KEYS[2], epoch)
end
if ARGV[4] ~= '*' and ARGV[4] ~= epoch then
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

for i = 3, #KEYS do
  local guardLimit = tonumber(ARGV[i + 4])
  redis.call('ZREMRANGEBYSCORE', KEYS[i], '-inf', now - window)
  if redis.call('ZCARD', KEYS[i]) >= guardLimit then
    return {0, guardLimit, 0, oldestAge(KEYS[i]), i - 2, epoch}
  end
end

local guards = #KEYS - 2
local function reserveGuards()
  for i = 3, #KEYS do
    if ARGV[i + 4 + guards] == '1' then
      redis.call('ZADD', KEYS[i], now, ARGV[3])
      redis.call('PEXPIRE', KEYS[i], window)
    end
  end
end

local limit = tonumber(ARGV[1])
if ARGV[6] == '1' then
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
    reserveGuards()
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
  reserveGuards()
  return {1, limit, limit - count - 1, oldestAge(KEYS[1]), 0, epoch}
end
return {0, limit, 0, oldestAge(KEYS[1]), 0, epoch}
`;

/** Keys the script always takes: the bucket and the token epoch. Guards follow them. */
const FIXED_KEYS = 2;

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

/** What `consume` decided, with the member it counted: what `release` takes back from a reserved guard. */
export interface CountedDecision extends RateLimitDecision {
  member: string;
}

/** The token epoch changed since the caller cached it: nothing was counted. */
export interface StaleEpoch {
  stale: true;
  /** The current epoch, to cache a fresh look-up under. */
  epoch: string;
}

/** A window that refuses the request while it is full (see SLIDING_WINDOW_SCRIPT). */
export interface GuardWindow {
  bucket: string;
  /** Exact windows only (up to `exactLimitMax`): a guard is read as a log. */
  limit: number;
  /** Count the request in this guard too when it is allowed: a reservation (see the script). */
  reserve?: boolean;
}

type SlidingWindowAnswer = [number, number, number, number, number, string];

interface ScriptedRedis extends Redis {
  /**
   * Keys, then arguments, as the script numbers them: bucket, epoch key, guard keys..., limit,
   * window, member, cached epoch, candidate epoch, approximate, guard limits..., guard reserve flags...
   */
  slidingWindow(numberOfKeys: number, ...keysAndArgs: (string | number)[]): Promise<SlidingWindowAnswer>;
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
    // No numberOfKeys: each call says how many, as the guards vary.
    if (!('slidingWindow' in redis)) redis.defineCommand('slidingWindow', { lua: SLIDING_WINDOW_SCRIPT });
    this.redis = redis as ScriptedRedis;
  }

  /**
   * Counts one request against `bucket` if it fits in the window. With guards, a full guard
   * refuses the request and nothing is counted. With `cachedEpoch`, nothing is counted either
   * when the token epoch has moved on: the answer is the current epoch instead.
   */
  async consume(
    bucket: string,
    limit: number,
    options: { guards?: readonly GuardWindow[]; cachedEpoch?: string } = {},
  ): Promise<CountedDecision | StaleEpoch> {
    const { guards, cachedEpoch } = options;
    const candidateEpoch = this.candidateEpoch;
    this.memberCount += 1;
    const approximate = limit > this.exactLimitMax;
    // Another key for the approximation: a token whose limit crosses the line changes type.
    const bucketKey = this.key(approximate ? `${bucket}:approx` : bucket);
    const epochKey = tokenEpochKey(this.keyPrefix);
    const member = `${this.memberPrefix}.${this.memberCount.toString(36)}`;
    const approximated = approximate ? '1' : '0';
    // Keys, then arguments, in the order SLIDING_WINDOW_SCRIPT reads them. Without guards
    // (every request of a token already known valid) the guard lists are empty.
    const windows = guards ?? [];
    const [allowed, appliedLimit, remaining, resetMs, refusingGuard, epoch] = await this.redis.slidingWindow(
      FIXED_KEYS + windows.length,
      bucketKey,
      epochKey,
      ...windows.map((guard) => this.guardKey(guard)),
      limit,
      this.windowMs,
      member,
      cachedEpoch ?? '*',
      candidateEpoch,
      approximated,
      ...windows.map((guard) => guard.limit),
      ...windows.map((guard) => (guard.reserve === true ? '1' : '0')),
    );
    if (epoch === candidateEpoch) this.candidateEpoch = newTokenEpoch();
    if (allowed === -1) return { stale: true, epoch };
    return {
      allowed: allowed === 1,
      limit: appliedLimit,
      remaining: Math.max(0, remaining),
      resetMs: Math.max(0, resetMs),
      refusedByGuard: refusingGuard > 0,
      member,
    };
  }

  /** Takes back a request `consume` counted in `bucket` (a reservation that turned out not to be needed). */
  async release(bucket: string, member: string): Promise<void> {
    await this.redis.zrem(this.key(bucket), member);
  }

  /** The current token epoch (made if Redis has none), counting nothing. */
  currentEpoch(): Promise<string> {
    return currentEpoch(this.redis, tokenEpochKey(this.keyPrefix));
  }

  private guardKey(guard: GuardWindow): string {
    if (guard.limit > this.exactLimitMax) throw new Error('a guard window must be exact: its limit is too high');
    return this.key(guard.bucket);
  }

  private key(bucket: string): string {
    return `${this.keyPrefix}:ratelimit:${bucket}`;
  }
}
