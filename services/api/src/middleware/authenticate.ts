import type { RequestHandler, Response } from 'express';
import { API_TOKEN_PREFIX, errorBody, hashApiToken, type ErrorType } from '@retention/core';
import { findTokenByHash, touchTokenLastUsed, type Db } from '@retention/db';
import type { Logger } from '@retention/runtime';
import type { ApiMetrics } from '../metrics.js';
import type { RateLimitDecision, SlidingWindowRateLimiter } from '../rate-limiter.js';
import { rateLimitMessage, setRateLimitHeaders } from './rate-limit-headers.js';

/** Failed authentications allowed per client address per minute: tokens cannot be guessed at speed. */
export const FAILED_AUTH_LIMIT_PER_MINUTE = 60;

/** How often a token's last_used_at is written, at most, by one API process. */
const LAST_USED_WRITE_INTERVAL_MS = 60_000;

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
}

/**
 * Authentication (spec 5.1) and the rate limit (spec 8) of every /api/v1 request:
 * - no Authorization header: 401 authentication_required;
 * - not `Bearer sk_live_...`, unknown or revoked: 401 invalid_token (looked up by SHA-256,
 *   on every request, so a revocation applies to the very next request on every instance);
 * - a valid token is counted in its own sliding window (its per-token limit);
 * - a failure is counted in a window per client address, and while that window is full every
 *   request from the address is refused with 429, valid token or not: were a valid token
 *   served, its 200 among the 429s would tell a guesser which guess was right. The address is
 *   `req.ip`, which TRUST_PROXY makes the one the outermost trusted proxy saw.
 * If Redis is unreachable the limit fails open: requests are served without rate-limit
 * headers, and a warning is logged.
 */
export function apiAccess({ db, limiter, logger, metrics }: AccessDependencies): RequestHandler {
  const lastUsedWrites = new Map<string, number>();
  let lastRedisWarning = 0;

  const limit = async (
    bucket: string,
    perMinute: number,
    guard?: { bucket: string; limit: number },
  ): Promise<RateLimitDecision | undefined> => {
    try {
      return await limiter.consume(bucket, perMinute, guard);
    } catch (error) {
      metrics.rateLimitUnavailable.inc();
      if (Date.now() - lastRedisWarning > 10_000) {
        lastRedisWarning = Date.now();
        logger.warn({ err: error }, 'rate limit unavailable (Redis unreachable): serving requests without a limit');
      }
      return undefined;
    }
  };

  const recordUse = (tokenId: string) => {
    const now = Date.now();
    if (now - (lastUsedWrites.get(tokenId) ?? 0) < LAST_USED_WRITE_INTERVAL_MS) return;
    lastUsedWrites.set(tokenId, now);
    touchTokenLastUsed(db, tokenId).catch((error: unknown) =>
      logger.warn({ err: error }, 'could not record token use'),
    );
  };

  return async (req, res, next) => {
    const addressBucket = `auth-failures:${req.ip ?? 'unknown'}`;
    const refuse = async (type: ErrorType, message: string) => {
      const decision = await limit(addressBucket, FAILED_AUTH_LIMIT_PER_MINUTE);
      if (decision) setRateLimitHeaders(res, decision);
      if (decision && !decision.allowed) {
        metrics.rateLimitRejections.inc({ reason: 'failed_auth' });
        res.status(429).json(errorBody('rate_limit_exceeded', rateLimitMessage({ ...decision, refusedByGuard: true })));
      } else {
        res.status(401).json(errorBody(type, message));
      }
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
    const credentials = await findTokenByHash(db, hashApiToken(token));
    if (!credentials || credentials.revoked_at !== null) {
      return refuse('invalid_token', 'Invalid API token: it is unknown or has been revoked.');
    }

    const decision = await limit(`token:${credentials.id}`, credentials.rate_limit_per_minute, {
      bucket: addressBucket,
      limit: FAILED_AUTH_LIMIT_PER_MINUTE,
    });
    if (decision) {
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
