import { ipv6Bytes } from '@retention/domain';
import { TtlCache } from '@retention/runtime';
import type { RateLimitDecision, SlidingWindowRateLimiter } from '../rate-limiter.js';
import { MAX_REMEMBERED, type LimitBackstop } from './process-limits.js';

/** Failed authentications allowed per client address per minute: tokens cannot be guessed at speed. */
const FAILED_AUTH_LIMIT_PER_MINUTE = 60;

/**
 * The failed-authentication bucket of a client address. IPv6 by its /64: one subscriber
 * usually gets a whole /64 (or more), and a per-address bucket would let a client rotate
 * through 2^64 addresses. An IPv4-mapped address is its IPv4 address.
 */
export function failedAuthBucket(address: string | undefined): string {
  const ip = (address ?? 'unknown').replace(/^::ffff:(\d+\.\d+\.\d+\.\d+)$/i, '$1');
  const bytes = ip.includes(':') ? ipv6Bytes(ip) : null;
  if (!bytes) return `auth-failures:${ip}`;
  const groups = [0, 2, 4, 6].map((index) => ((bytes[index]! << 8) | bytes[index + 1]!).toString(16));
  return `auth-failures:${groups.join(':')}::/64`;
}

/**
 * Failed authentications counted per client address (docs/api.md, "Rate limits"): each one is
 * counted in the address's window; while the window is full every request from the address is
 * refused, and that refusal is remembered in this process until the window frees, so a limited
 * address costs neither Redis nor PostgreSQL.
 */
export class FailedAuthGuard {
  private readonly limited = new TtlCache<RateLimitDecision & { rememberedAt: number }>(MAX_REMEMBERED);

  constructor(
    private readonly limiter: SlidingWindowRateLimiter,
    private readonly backstop: LimitBackstop,
  ) {}

  /** The guard the token's own count runs under, for a request that may be a guess. */
  guardOf(bucket: string): { bucket: string; limit: number } {
    return { bucket, limit: FAILED_AUTH_LIMIT_PER_MINUTE };
  }

  /** The address's remembered refusal, its reset counted down to now; undefined when not limited. */
  stillLimited(bucket: string): RateLimitDecision | undefined {
    const remembered = this.limited.get(bucket);
    if (!remembered) return undefined;
    return { ...remembered, resetMs: Math.max(0, remembered.resetMs - (Date.now() - remembered.rememberedAt)) };
  }

  /** Remembers a refusal of the address (its window is full) until the window frees. */
  remember(bucket: string, decision: RateLimitDecision): void {
    this.limited.set(bucket, { ...decision, allowed: false, rememberedAt: Date.now() }, decision.resetMs);
  }

  /**
   * Counts a failure of the address (in this process while Redis is away). Undefined when
   * nothing could count it; a decision that filled the window is remembered as a refusal.
   */
  async countFailure(bucket: string): Promise<RateLimitDecision | undefined> {
    let decision: RateLimitDecision | undefined;
    try {
      const answer = await this.limiter.consume(bucket, FAILED_AUTH_LIMIT_PER_MINUTE);
      decision = 'stale' in answer ? undefined : answer;
    } catch (error) {
      this.backstop.redisUnavailable(error);
      decision = this.backstop.fallback.consume(bucket, this.backstop.share(FAILED_AUTH_LIMIT_PER_MINUTE));
    }
    // This failure filled the window (or found it full): the next request is refused from memory.
    if (decision && (!decision.allowed || decision.remaining === 0)) this.remember(bucket, decision);
    return decision;
  }
}
