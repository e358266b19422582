import type { RateLimitDecision } from '../rate-limiter.js';

/** How many keys each of these in-process structures keeps at most (oldest dropped first). */
export const MAX_REMEMBERED = 10_000;

/**
 * The rate limit of one process while Redis is away: a fixed one-minute window per key,
 * bounded in keys. Coarser than Redis's sliding log, but a bound: each replica allows its
 * share, so the install as a whole stays near the limit.
 */
export class FallbackWindows {
  private readonly windows = new Map<string, { startedAt: number; count: number }>();

  consume(key: string, limit: number, now = Date.now()): RateLimitDecision {
    let window = this.windows.get(key);
    if (!window || now - window.startedAt >= 60_000) {
      if (!window && this.windows.size >= MAX_REMEMBERED) this.windows.delete(this.windows.keys().next().value!);
      window = { startedAt: now, count: 0 };
      this.windows.set(key, window);
    }
    const resetMs = window.startedAt + 60_000 - now;
    if (window.count >= limit) return { allowed: false, limit, remaining: 0, resetMs, refusedByGuard: false };
    window.count += 1;
    return { allowed: true, limit, remaining: limit - window.count, resetMs, refusedByGuard: false };
  }
}

/** Redis, or this process's share of a limit while Redis is away. */
export interface LimitBackstop {
  fallback: FallbackWindows;
  /** A limit divided among the replicas expected to share it (at least 1). */
  share(limit: number): number;
  /** Counts and (throttled) logs that the limit ran without Redis. */
  redisUnavailable(error: unknown): void;
}
