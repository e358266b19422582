import { findTokenByHash, type Db, type TokenCredentials } from '@retention/db';
import { TtlCache } from '@retention/runtime';
import type { RateLimitDecision, SlidingWindowRateLimiter } from '../rate-limiter.js';
import { MAX_REMEMBERED, type LimitBackstop } from './process-limits.js';

/** Rounds of "the epoch moved: look the token up again" before looking it up uncached. */
const EPOCH_ROUNDS = 3;

/** How long a hash that matched no token is answered from memory. */
const UNKNOWN_HASH_MS = 10_000;

/**
 * How long a token look-up is kept. Correctness does not rest on the cache: every use is
 * checked against the token epoch in Redis (SlidingWindowRateLimiter), which every revocation
 * and limit change moves. The lifetime only bounds how long an entry could outlive a change
 * whose announcement was lost (the CLI then says so); the size bounds memory.
 */
const TOKEN_LOOKUP_MS = 10_000;
const MAX_CACHED_TOKENS = 10_000;

/**
 * How long a token found valid is let through an address locked out by failed
 * authentications (authenticate.ts): an integration calling hourly from behind the same NAT as
 * a failing client is served, though its look-up is long out of the cache.
 */
const SEEN_VALID_MS = 60 * 60_000;

/** A token look-up, and the token epoch it was read under. */
interface CachedToken {
  credentials: TokenCredentials;
  epoch: string;
}

export interface Admission {
  /** Undefined: the token is unknown or revoked. */
  credentials?: TokenCredentials;
  /** The token's rate-limit decision; undefined when nothing could count it. */
  decision?: RateLimitDecision;
}

/** Thrown by the Redis calls of admission, so that only Redis failures fail open. */
class RedisUnavailableError extends Error {
  constructor(readonly original: unknown) {
    super('Redis unreachable');
  }
}

async function viaRedis<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    throw new RedisUnavailableError(error);
  }
}

/**
 * Who a token is and whether its request fits its limit, in one Redis round trip when the
 * cached look-up is current. Token look-ups (by SHA-256) are cached, but every use of the
 * cache is checked against the token epoch inside the rate-limit script, so a revocation
 * applies to the very next request on every API process. Hashes that matched nothing are
 * remembered for 10 s. Without Redis: served from the cache (a revocation then applies within
 * its 10 s), within this process's share of the token's limit.
 */
export class TokenAdmission {
  /** Token look-ups by hash: a request costs one Redis round trip, not also a PostgreSQL one. */
  private readonly tokens = new TtlCache<CachedToken>(MAX_CACHED_TOKENS);
  private readonly unknownHashes = new TtlCache<true>(MAX_REMEMBERED);
  /** Hashes a look-up found valid within SEEN_VALID_MS; forgotten when one finds them revoked. */
  private readonly validHashes = new TtlCache<true>(MAX_CACHED_TOKENS);
  /**
   * Look-ups under way, by hash. Requests that miss the cache together share one: when a busy
   * token's entry expired, each request in flight (50 under the API benchmark) made the same
   * Redis and PostgreSQL look-up at once, every 10 s, queueing on the pool of 10 before its own
   * query. Sharing changes no answer: the epoch check in the rate-limit script still decides.
   */
  private readonly lookups = new Map<string, Promise<CachedToken | undefined>>();

  constructor(
    private readonly db: Db,
    private readonly limiter: SlidingWindowRateLimiter,
    private readonly backstop: LimitBackstop,
    private readonly lookupMs: number = TOKEN_LOOKUP_MS,
  ) {}

  /** A token this process has found valid within the hour, and not revoked since as far as it knows. */
  seenValid(hash: string): boolean {
    return this.tokens.get(hash) !== undefined || this.validHashes.get(hash) === true;
  }

  /** Caches a look-up's answer: the token for `lookupMs`, that it was valid for the hour, or that it was not. */
  private remember(hash: string, credentials: TokenCredentials | undefined, epoch: string): CachedToken | undefined {
    if (!credentials || credentials.revoked_at !== null) {
      this.unknownHashes.set(hash, true, UNKNOWN_HASH_MS);
      this.validHashes.delete(hash);
      return undefined;
    }
    const cached = { credentials, epoch };
    this.tokens.set(hash, cached, this.lookupMs);
    this.validHashes.set(hash, true, SEEN_VALID_MS);
    return cached;
  }

  /** A hash that matched no token a moment ago. */
  isUnknown(hash: string): boolean {
    return this.unknownHashes.get(hash) === true;
  }

  /** Admits the token's request, under `guard` (the address's failed-authentication window) when given. */
  async admit(hash: string, guard: { bucket: string; limit: number } | undefined): Promise<Admission> {
    try {
      return await this.admitViaRedis(hash, guard);
    } catch (error) {
      if (!(error instanceof RedisUnavailableError)) throw error;
      this.backstop.redisUnavailable(error.original);
      return this.admitWithoutRedis(hash);
    }
  }

  private async admitViaRedis(hash: string, guard: { bucket: string; limit: number } | undefined): Promise<Admission> {
    let cached: CachedToken | undefined = this.tokens.get(hash);
    for (let round = 0; round < EPOCH_ROUNDS; round += 1) {
      if (!cached) {
        cached = await this.lookUp(hash);
        if (!cached) return {};
      }
      const { credentials } = cached;
      const answer = await viaRedis(() =>
        this.limiter.consume(`token:${credentials.id}`, credentials.rate_limit_per_minute, {
          ...(guard && { guards: [guard] }),
          cachedEpoch: cached!.epoch,
        }),
      );
      if (!('stale' in answer)) return { credentials, decision: answer };
      this.tokens.delete(hash);
      cached = undefined;
    }
    // Tokens are changing faster than this request can catch up: decide on a fresh look-up.
    const credentials = await findTokenByHash(this.db, hash);
    if (!credentials || credentials.revoked_at !== null) {
      this.validHashes.delete(hash);
      return {};
    }
    const decision = await viaRedis(() =>
      this.limiter.consume(`token:${credentials.id}`, credentials.rate_limit_per_minute, {
        ...(guard && { guards: [guard] }),
      }),
    );
    return 'stale' in decision ? { credentials } : { credentials, decision };
  }

  /** The token's look-up, cached as `remember` does; one at a time per hash, shared by whoever asks meanwhile. */
  private lookUp(hash: string): Promise<CachedToken | undefined> {
    const underWay = this.lookups.get(hash);
    if (underWay) return underWay;
    const lookup = (async () => {
      // The epoch first: a change committed after this read moves the epoch again.
      const epoch = await viaRedis(() => this.limiter.currentEpoch());
      return this.remember(hash, await findTokenByHash(this.db, hash), epoch);
    })().finally(() => this.lookups.delete(hash));
    this.lookups.set(hash, lookup);
    return lookup;
  }

  /**
   * Redis is unreachable: the token cache is kept, so an outage does not turn every request
   * into a PostgreSQL look-up; entries made now carry an epoch no Redis holds, so they are
   * looked up again once Redis is back.
   */
  private async admitWithoutRedis(hash: string): Promise<Admission> {
    const found =
      this.tokens.get(hash)?.credentials ?? this.remember(hash, await findTokenByHash(this.db, hash), '')?.credentials;
    if (!found) return {};
    const decision = this.backstop.fallback.consume(
      `token:${found.id}`,
      this.backstop.share(found.rate_limit_per_minute),
    );
    return { credentials: found, decision };
  }
}
