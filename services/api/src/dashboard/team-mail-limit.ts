import { rateLimited } from '@retention/core';
import { accountEmail } from '@retention/domain';
import type { Redis } from '@retention/runtime';
import { SlidingWindowRateLimiter } from '../rate-limiter.js';
import { accountHash } from './trusted-devices.js';

/**
 * The emails an owner or admin sends from the Team page (invitations, reset links) count
 * against a workspace's window and, within it, each recipient's (docs/dashboard-api.md,
 * "Emails sent from Team"). Numbers no real team reaches; without them, a signed-in admin could
 * make this service's mail server send a stream of mail to any address. Per recipient within
 * the workspace, not across workspaces: another tenant must not be able to use up an address's
 * count and keep its invitation from arriving.
 */
const WINDOW_MS = 60 * 60_000;
const TEAM_EMAILS_PER_WORKSPACE = 50;
const TEAM_EMAILS_PER_RECIPIENT = 5;

export class TeamMailLimit {
  private readonly window: SlidingWindowRateLimiter;

  constructor(redis: Redis, keyPrefix: string) {
    this.window = new SlidingWindowRateLimiter(redis, keyPrefix, WINDOW_MS);
  }

  /**
   * Counts one email to `email` from the workspace, then makes what it carries (`make`: the
   * invitation, the reset link) and answers it. While either window is full: 429, and nothing is
   * made. When `make` refuses (400, 403, 409), no email goes, so it is taken back off both
   * counts: mistaken attempts must not use up the real one's. Counted before making, not after,
   * so that two requests at once cannot both pass a count with one place left; a failed attempt
   * holds its place only while it runs. An address no account can have is refused by `make`,
   * and is counted nowhere.
   */
  async admitWhile<T>(workspaceId: string, email: unknown, make: () => Promise<T>): Promise<T> {
    if (accountEmail(email) === null) return make();
    const recipientBucket = `team-mail-recipient:${workspaceId}:${accountHash(email)}`;
    const workspaceBucket = `team-mail:${workspaceId}`;
    const decision = await this.window.consume(recipientBucket, TEAM_EMAILS_PER_RECIPIENT, {
      guards: [{ bucket: workspaceBucket, limit: TEAM_EMAILS_PER_WORKSPACE, reserve: true }],
    });
    if ('stale' in decision) throw new Error('the team email limit answered a token epoch');
    if (!decision.allowed) {
      throw rateLimited(
        decision.refusedByGuard
          ? `Too many invitation and reset emails from this workspace: at most ${TEAM_EMAILS_PER_WORKSPACE} an hour. Try again later.`
          : `Too many invitation and reset emails to this address: at most ${TEAM_EMAILS_PER_RECIPIENT} an hour. Try again later.`,
        decision.resetMs,
      );
    }
    try {
      return await make();
    } catch (error) {
      // The refusal is the answer; should Redis fail to take the count back, one email too
      // many stays counted for the hour, which is the safe side.
      await Promise.all(
        [recipientBucket, workspaceBucket].map((bucket) => this.window.release(bucket, decision.member)),
      ).catch(() => undefined);
      throw error;
    }
  }
}
