import type { RequestHandler, Response } from 'express';
import { API_TOKEN_PREFIX, errorBody, hashApiToken, type ErrorType } from '@retention/core';
import { findTokenByHash, touchTokenLastUsed, type Db, type TokenCredentials } from '@retention/db';
import { ipv6Bytes } from '@retention/domain';
import type { Logger } from '@retention/runtime';
import type { ApiMetrics } from '../metrics.js';
import type { RateLimitDecision, SlidingWindowRateLimiter } from '../rate-limiter.js';
import { TokenCache, type CachedToken } from '../token-cache.js';
import { rateLimitMessage, setRateLimitHeaders } from './rate-limit-headers.js';

/** Failed authentications allowed per client address per minute: tokens cannot be guessed at speed. */
export const FAILED_AUTH_LIMIT_PER_MINUTE = 60;

/** Rounds of "the epoch moved: look the token up again" before looking it up uncached. */
const EPOCH_ROUNDS = 3;

/** How often a token's last_used_at is written, at most, by one API process. */
const LAST_USED_WRITE_INTERVAL_MS = 60_000;

/** Every token minted is `sk_live_` + 32 base62 characters: anything else is unknown unhashed. */
const TOKEN_SHAPE = /^sk_live_[0-9A-Za-z]{32}$/;

/** How long a hash that matched no token is answered from memory, and how many are kept. */
const UNKNOWN_HASH_MS = 10_000;
const MAX_REMEMBERED = 10_000;

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
 * The rate limit of one process while Redis is away: a fixed one-minute window per key,
 * bounded in keys. Coarser than Redis's sliding log, but a bound: each replica allows its
 * share, so the install as a whole stays near the limit.
 */
class FallbackWindows {
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

/** Expiring entries of this process, bounded in number (oldest dropped first). */
class ExpiringSet<T> {
  private readonly entries = new Map<string, { value: T; expiresAt: number }>();

  get(key: string, now = Date.now()): T | undefined {
    const entry = this.entries.get(key);
    if (entry && entry.expiresAt <= now) this.entries.delete(key);
    return entry && entry.expiresAt > now ? entry.value : undefined;
  }

  set(key: string, value: T, lifetimeMs: number, now = Date.now()): void {
    this.entries.delete(key);
    if (this.entries.size >= MAX_REMEMBERED) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(key, { value, expiresAt: now + lifetimeMs });
  }
}

export interface Caller {
  workspaceId: string;
  tokenId: string;
}

export function callerOf(res: Response): Caller {
  return res.locals.caller as Caller;
}

interface AccessDependencies {
  db: Db;
  limiter: SlidingWindowRateLimiter;
  logger: Logger;
  metrics: ApiMetrics;
  /** API_EXPECTED_REPLICAS: while Redis is away each process allows this share of a limit. */
  expectedReplicas?: number;
}

/**
 * Authentication and the rate limit (docs/api.md, "Basics" and "Rate limits") of every /api/v1 request:
 * - no Authorization header: 401 authentication_required;
 * - not `Bearer sk_live_...`, unknown or revoked: 401 invalid_token. Tokens are looked up by
 *   SHA-256 and the look-up is cached, but every use of the cache is checked against the token
 *   epoch in Redis within the rate-limit script, so a revocation applies to the very next
 *   request on every instance; without Redis, nothing is served from the cache;
 * - a valid token is counted in its own sliding window (its per-token limit);
 * - a failure is counted in a window per client address, and while that window is full every
 *   request from the address is refused with 429, valid token or not: were a valid token
 *   served, its 200 among the 429s would tell a guesser which guess was right. The address is
 *   `req.ip`, which TRUST_PROXY makes the one the outermost trusted proxy saw.
 * If Redis is unreachable the limit fails open: requests are served without rate-limit
 * headers, and a warning is logged.
 */
export function apiAccess({ db, limiter, logger, metrics, expectedReplicas = 1 }: AccessDependencies): RequestHandler {
  const lastUsedWrites = new Map<string, number>();
  let lastRedisWarning = 0;
  const fallback = new FallbackWindows();
  const share = (limit: number) => Math.max(1, Math.floor(limit / expectedReplicas));

  const rateLimitUnavailable = (error: unknown) => {
    metrics.rateLimitUnavailable.inc();
    if (Date.now() - lastRedisWarning > 10_000) {
      lastRedisWarning = Date.now();
      logger.warn(
        { err: error },
        'rate limit unavailable (Redis unreachable): limiting in this process alone (its share of each limit)',
      );
    }
  };

  /** A failed authentication, counted against the client's address (in this process while Redis is away). */
  const countFailure = async (bucket: string): Promise<RateLimitDecision | undefined> => {
    try {
      const decision = await limiter.consume(bucket, FAILED_AUTH_LIMIT_PER_MINUTE);
      return 'stale' in decision ? undefined : decision;
    } catch (error) {
      rateLimitUnavailable(error);
      return fallback.consume(bucket, share(FAILED_AUTH_LIMIT_PER_MINUTE));
    }
  };

  const tokens = new TokenCache();
  /** Hashes that matched no token (or a revoked one) a moment ago: no second look-up. */
  const unknownHashes = new ExpiringSet<true>();
  /** Addresses whose failed-authentication window Redis reported full, until it frees. */
  const limitedAddresses = new ExpiringSet<RateLimitDecision & { rememberedAt: number }>();

  /**
   * The token's credentials (undefined: unknown or revoked) and its rate-limit decision, in
   * one Redis round trip when the cached look-up is current. Throws when Redis does.
   */
  const admit = async (
    hash: string,
    guard: { bucket: string; limit: number } | undefined,
  ): Promise<{ credentials?: TokenCredentials; decision?: RateLimitDecision }> => {
    let cached: CachedToken | undefined = tokens.get(hash);
    for (let round = 0; round < EPOCH_ROUNDS; round += 1) {
      if (!cached) {
        // The epoch first: a change committed after this read moves the epoch again.
        const epoch = await viaRedis(() => limiter.currentEpoch());
        const credentials = await findTokenByHash(db, hash);
        if (!credentials || credentials.revoked_at !== null) {
          unknownHashes.set(hash, true, UNKNOWN_HASH_MS);
          return {};
        }
        cached = { credentials, epoch };
        tokens.set(hash, cached);
      }
      const { credentials } = cached;
      const answer = await viaRedis(() =>
        limiter.consume(`token:${credentials.id}`, credentials.rate_limit_per_minute, {
          ...(guard && { guard }),
          cachedEpoch: cached!.epoch,
        }),
      );
      if (!('stale' in answer)) return { credentials, decision: answer };
      tokens.delete(hash);
      cached = undefined;
    }
    // Tokens are changing faster than this request can catch up: decide on a fresh look-up.
    const credentials = await findTokenByHash(db, hash);
    if (!credentials || credentials.revoked_at !== null) return {};
    const decision = await viaRedis(() =>
      limiter.consume(`token:${credentials.id}`, credentials.rate_limit_per_minute, { ...(guard && { guard }) }),
    );
    return 'stale' in decision ? { credentials } : { credentials, decision };
  };

  const recordUse = (tokenId: string) => {
    const now = Date.now();
    if (now - (lastUsedWrites.get(tokenId) ?? 0) < LAST_USED_WRITE_INTERVAL_MS) return;
    lastUsedWrites.set(tokenId, now);
    touchTokenLastUsed(db, tokenId).catch((error: unknown) =>
      logger.warn({ err: error }, 'could not record token use'),
    );
  };

  const refuseLimited = (res: Response, decision: RateLimitDecision) => {
    setRateLimitHeaders(res, decision);
    metrics.rateLimitRejections.inc({ reason: 'failed_auth' });
    res.status(429).json(errorBody('rate_limit_exceeded', rateLimitMessage({ ...decision, refusedByGuard: true })));
  };

  /** The address's remembered refusal, its reset counted down to now; undefined when not limited. */
  const stillLimited = (bucket: string): RateLimitDecision | undefined => {
    const remembered = limitedAddresses.get(bucket);
    if (!remembered) return undefined;
    return { ...remembered, resetMs: Math.max(0, remembered.resetMs - (Date.now() - remembered.rememberedAt)) };
  };

  return async (req, res, next) => {
    const addressBucket = failedAuthBucket(req.ip);
    const refuse = async (type: ErrorType, message: string) => {
      const limited = stillLimited(addressBucket);
      if (limited) return refuseLimited(res, limited);
      const decision = await countFailure(addressBucket);
      if (decision && !decision.allowed) {
        limitedAddresses.set(addressBucket, { ...decision, rememberedAt: Date.now() }, decision.resetMs);
        return refuseLimited(res, decision);
      }
      if (decision?.remaining === 0) {
        // This failure filled the window: the next request from here is refused from memory.
        const full = { ...decision, allowed: false, rememberedAt: Date.now() };
        limitedAddresses.set(addressBucket, full, decision.resetMs);
      }
      if (decision) setRateLimitHeaders(res, decision);
      res.status(401).json(errorBody(type, message));
    };

    const header = req.get('authorization');
    if (header === undefined || header.trim() === '') {
      return refuse('authentication_required', 'No API token provided. Send the header Authorization: Bearer <token>.');
    }
    const token = /^Bearer +(\S+) *$/i.exec(header)?.[1];
    if (!token?.startsWith(API_TOKEN_PREFIX)) {
      return refuse(
        'invalid_token',
        `Malformed API token. Send Authorization: Bearer <token>, where the token begins with ${API_TOKEN_PREFIX}.`,
      );
    }
    const unknown = () => refuse('invalid_token', 'Invalid API token: it is unknown or has been revoked.');
    // No token has another shape: refused before hashing, like an unknown one.
    if (!TOKEN_SHAPE.test(token)) return unknown();
    const hash = hashApiToken(token);
    // A token this process has seen valid (and whose epoch Redis still vouches for) is served
    // even from an address locked out by failures: behind a shared NAT, one guesser must not
    // lock out everyone. It cannot help a guesser: a guess is never in this cache.
    const known = tokens.get(hash) !== undefined;
    if (!known) {
      // A limited address costs neither Redis nor PostgreSQL while its window is full.
      const limited = stillLimited(addressBucket);
      if (limited) return refuseLimited(res, limited);
      if (unknownHashes.get(hash)) return unknown();
    }
    let admission: Awaited<ReturnType<typeof admit>>;
    try {
      admission = await admit(hash, known ? undefined : { bucket: addressBucket, limit: FAILED_AUTH_LIMIT_PER_MINUTE });
    } catch (error) {
      if (!(error instanceof RedisUnavailableError)) throw error;
      // Redis is unreachable: served, but within this process's share of the token's limit.
      // The token cache is kept (a revocation then applies within its 10 s), so an outage
      // does not turn every request into a PostgreSQL look-up; entries made now carry an
      // epoch no Redis holds, so they are looked up again once Redis is back.
      rateLimitUnavailable(error.original);
      let found = tokens.get(hash)?.credentials;
      if (!found) {
        const row = await findTokenByHash(db, hash);
        if (row && row.revoked_at === null) {
          found = row;
          tokens.set(hash, { credentials: row, epoch: '' });
        } else unknownHashes.set(hash, true, UNKNOWN_HASH_MS);
      }
      admission = found
        ? { credentials: found, decision: fallback.consume(`token:${found.id}`, share(found.rate_limit_per_minute)) }
        : {};
    }
    const { credentials, decision } = admission;
    if (!credentials) return unknown();
    if (decision) {
      if (decision.refusedByGuard) {
        limitedAddresses.set(addressBucket, { ...decision, rememberedAt: Date.now() }, decision.resetMs);
      }
      setRateLimitHeaders(res, decision);
      if (!decision.allowed) {
        metrics.rateLimitRejections.inc({ reason: decision.refusedByGuard ? 'failed_auth' : 'token' });
        res.status(429).json(errorBody('rate_limit_exceeded', rateLimitMessage(decision)));
        return;
      }
    }
    res.locals.caller = { workspaceId: credentials.workspace_id, tokenId: credentials.id } satisfies Caller;
    recordUse(credentials.id);
    next();
  };
}
