import type { Response } from 'express';
import type { RateLimitDecision } from '../rate-limiter.js';

/** Whole seconds, rounded up, so waiting that long is always enough. */
const wholeSeconds = (milliseconds: number) => Math.ceil(milliseconds / 1000);

/** X-RateLimit-* on every response to an authenticated request (docs/api.md, "Rate limits"). */
export function setRateLimitHeaders(res: Response, decision: RateLimitDecision): void {
  res.setHeader('X-RateLimit-Limit', String(decision.limit));
  res.setHeader('X-RateLimit-Remaining', String(decision.remaining));
  res.setHeader('X-RateLimit-Reset', String(wholeSeconds(decision.resetMs)));
  if (!decision.allowed) res.setHeader('Retry-After', String(Math.max(1, wholeSeconds(decision.resetMs))));
}

export function rateLimitMessage(decision: RateLimitDecision): string {
  const wait = Math.max(1, wholeSeconds(decision.resetMs));
  const seconds = `${wait} second${wait === 1 ? '' : 's'}`;
  return decision.refusedByGuard
    ? `Too many failed authentication attempts from this address: the limit is ${decision.limit} per minute. Retry in ${seconds}.`
    : `Rate limit exceeded: this token allows ${decision.limit} requests per minute. Retry in ${seconds}.`;
}
