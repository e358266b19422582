import type { RequestHandler, Response } from 'express';
import { API_TOKEN_PREFIX, errorBody, hashApiToken, type ErrorType } from '@retention/core';
import { touchTokenLastUsed, type Db } from '@retention/db';
import { throttledWarn, type Logger } from '@retention/runtime';
import type { ApiMetrics } from '../metrics.js';
import type { RateLimitDecision, SlidingWindowRateLimiter } from '../rate-limiter.js';
import { authorizationHeadersOf, bearerTokenOf } from './bearer-token.js';
import { failedAuthBucket, FailedAuthGuard } from './failed-auth-guard.js';
import { FallbackWindows, type LimitBackstop } from './process-limits.js';
import { rateLimitMessage, setRateLimitHeaders } from './rate-limit-headers.js';
import { TokenAdmission } from './token-admission.js';

/** How often a token's last_used_at is written, at most, by one API process. */
const LAST_USED_WRITE_INTERVAL_MS = 60_000;

export interface Caller {
  workspaceId: string;
  tokenId: string;
}

export function callerOf(res: Response): Caller {
  return res.locals.caller as Caller;
}

interface AuthenticateDependencies {
  db: Db;
  limiter: SlidingWindowRateLimiter;
  logger: Logger;
  metrics: ApiMetrics;
  /** API_EXPECTED_REPLICAS: while Redis is away each process allows this share of a limit. */
  expectedReplicas?: number;
  /** How long a token look-up is cached; TokenAdmission's default when not given. */
  tokenLookupMs?: number;
}

/**
 * Authentication and the rate limit (docs/api.md, "Basics" and "Rate limits") of every /api/v1
 * request, answered here; the deciding is done by the pieces it calls:
 * - `bearerTokenOf`: no Authorization header is 401 authentication_required; anything but
 *   `Bearer sk_live_…` is 401 invalid_token (malformed), and so are two Authorization headers
 *   (ambiguous); a shape no token has is unknown;
 * - `TokenAdmission`: unknown or revoked is 401 invalid_token; a valid token is counted in its
 *   own sliding window (its per-token limit), 429 when full;
 * - `FailedAuthGuard`: a failure is counted in a window per client address, and while that
 *   window is full every request from the address is refused with 429, but for a token this
 *   process has found valid within the last hour (TokenAdmission.seenValid): a token it has
 *   not is not told apart from a guess, whose 200 among the 429s would tell a guesser which
 *   guess was right. The address is `req.ip` (checked in client-ip.ts): the one the outermost trusted
 *   proxy saw, as TRUST_PROXY makes it.
 * If Redis is unreachable the limit fails open to this process's share of each limit, without
 * rate-limit headers when nothing counted, and a warning is logged (at most every 10 s).
 */
export function authenticate({
  db,
  limiter,
  logger,
  metrics,
  expectedReplicas = 1,
  tokenLookupMs,
}: AuthenticateDependencies): RequestHandler {
  const warn = throttledWarn(logger);
  const backstop: LimitBackstop = {
    fallback: new FallbackWindows(),
    share: (limit) => Math.max(1, Math.floor(limit / expectedReplicas)),
    redisUnavailable: (error) => {
      metrics.rateLimitUnavailable.inc();
      warn(
        'rate-limit',
        error,
        'rate limit unavailable (Redis unreachable): limiting in this process alone (its share of each limit)',
      );
    },
  };
  const guard = new FailedAuthGuard(limiter, backstop);
  const admission = new TokenAdmission(db, limiter, backstop, tokenLookupMs);
  const lastUsedWrites = new Map<string, number>();

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

  return async (req, res, next) => {
    const addressBucket = failedAuthBucket(req.ip);
    const refuse = async (type: ErrorType, message: string) => {
      const limited = guard.stillLimited(addressBucket);
      if (limited) return refuseLimited(res, limited);
      const decision = await guard.countFailure(addressBucket);
      if (decision && !decision.allowed) return refuseLimited(res, decision);
      if (decision) setRateLimitHeaders(res, decision);
      res.status(401).json(errorBody(type, message));
    };
    const unknown = () => refuse('invalid_token', 'Invalid API token: it is unknown or has been revoked.');

    const bearer = bearerTokenOf(authorizationHeadersOf(req.rawHeaders));
    if (bearer.kind === 'ambiguous') {
      return refuse(
        'invalid_token',
        'Send one Authorization header: this request has several, and which token to use would be a guess.',
      );
    }
    if (bearer.kind === 'missing') {
      return refuse('authentication_required', 'No API token provided. Send the header Authorization: Bearer <token>.');
    }
    if (bearer.kind === 'malformed') {
      return refuse(
        'invalid_token',
        `Malformed API token. Send Authorization: Bearer <token>, where the token begins with ${API_TOKEN_PREFIX}.`,
      );
    }
    // No token has another shape: refused before hashing, like an unknown one.
    if (bearer.kind === 'impossible') return unknown();
    const hash = hashApiToken(bearer.token);
    // A token this process has found valid within the hour is served even from an address
    // locked out by failures: behind a shared NAT, one guesser (or one cron job with a revoked
    // token) must not lock out every integration there. It cannot help a guesser: a guess is
    // never found valid. It is looked up as any token is, so a revoked one is refused still.
    const known = admission.seenValid(hash);
    if (!known) {
      // A limited address costs neither Redis nor PostgreSQL while its window is full.
      const limited = guard.stillLimited(addressBucket);
      if (limited) return refuseLimited(res, limited);
      if (admission.isUnknown(hash)) return unknown();
    }
    const { credentials, decision } = await admission.admit(hash, known ? undefined : guard.guardOf(addressBucket));
    if (!credentials) return unknown();
    if (decision) {
      if (decision.refusedByGuard) guard.remember(addressBucket, decision);
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
