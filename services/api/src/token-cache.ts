import type { TokenCredentials } from '@retention/db';

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
  private readonly entries = new Map<string, CachedToken & { expiresAt: number }>();

  constructor(
    private readonly lifetimeMs = 10_000,
    private readonly maxEntries = 10_000,
  ) {}

  get(hash: string, now = Date.now()): CachedToken | undefined {
    const entry = this.entries.get(hash);
    if (entry && entry.expiresAt <= now) this.entries.delete(hash);
    return entry && entry.expiresAt > now ? entry : undefined;
  }

  set(hash: string, token: CachedToken, now = Date.now()): void {
    this.entries.delete(hash);
    if (this.entries.size >= this.maxEntries) {
      // Maps iterate in insertion order: the first key is the oldest entry.
      this.entries.delete(this.entries.keys().next().value!);
    }
    this.entries.set(hash, { ...token, expiresAt: now + this.lifetimeMs });
  }

  delete(hash: string): void {
    this.entries.delete(hash);
  }
}
