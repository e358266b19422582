import type { TokenCredentials } from '@retention/db';
import { TtlCache } from '@retention/runtime';

/** A token look-up, and the token epoch it was read under. */
export interface CachedToken {
  credentials: TokenCredentials;
  epoch: string;
}

/**
 * Token look-ups of this API process, by token hash, so that a request costs one Redis round
 * trip instead of a Redis and a PostgreSQL one. Correctness does not rest on this cache: every
 * use is checked against the token epoch in Redis (SlidingWindowRateLimiter), which every
 * revocation and limit change moves. The lifetime only bounds how long an entry could outlive
 * a change whose announcement was lost (the CLI then says so), and the size bounds memory.
 */
export class TokenCache {
  private readonly entries: TtlCache<CachedToken>;

  constructor(
    private readonly lifetimeMs = 10_000,
    maxEntries = 10_000,
  ) {
    this.entries = new TtlCache(maxEntries);
  }

  get(hash: string, now = Date.now()): CachedToken | undefined {
    return this.entries.get(hash, now);
  }

  set(hash: string, token: CachedToken, now = Date.now()): void {
    this.entries.set(hash, token, this.lifetimeMs, now);
  }

  delete(hash: string): void {
    this.entries.delete(hash);
  }
}
