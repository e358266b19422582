import { rateLimited } from '@retention/core';
import type { Redis } from '@retention/runtime';
import { SlidingWindowRateLimiter } from '../rate-limiter.js';

/**
 * Send test and Resend make their request from the API process at once, outside the worker's
 * per-endpoint cap and retry schedule: without a limit, a signed-in admin could turn the
 * dashboard into a stream of requests at any URL an endpoint names. Both count against one
 * sliding window per workspace (docs/dashboard-api.md, "Limits on guessing" and what follows);
 * a person debugging a receiver sends a few a minute.
 */
const WINDOW_MS = 60_000;
const MANUAL_SENDS_PER_WORKSPACE = 30;

export class ManualSendLimit {
  private readonly window: SlidingWindowRateLimiter;

  constructor(redis: Redis, keyPrefix: string) {
    this.window = new SlidingWindowRateLimiter(redis, keyPrefix, WINDOW_MS);
  }

  /** Counts one hand-sent request of the workspace; throws 429 while it is over the limit. */
  async admit(workspaceId: string): Promise<void> {
    const decision = await this.window.consume(`manual-send:${workspaceId}`, MANUAL_SENDS_PER_WORKSPACE);
    if ('stale' in decision) throw new Error('the manual-send limit answered a token epoch');
    if (decision.allowed) return;
    throw rateLimited(
      `Too many Send test and Resend requests: at most ${MANUAL_SENDS_PER_WORKSPACE} a minute for a workspace. Wait a moment and try again.`,
      decision.resetMs,
    );
  }
}
