import { rateLimited } from '@retention/core';
import { accountEmail } from '@retention/domain';
import type { Redis } from '@retention/runtime';
import { SlidingWindowRateLimiter } from '../rate-limiter.js';
import { accountHash } from './trusted-devices.js';

/**
 * The e-mails an owner or admin sends from the Team page (invitations, reset links) count
 * against a workspace's window and, within it, each recipient's (docs/dashboard-api.md,
 * "E-mails sent from Team"). Numbers no real team reaches; without them, a signed-in admin could
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
   * Counts one e-mail to `email` from the workspace, before anything is made for it; throws 429
   * while either window is full. An address no account can have is refused by validation after
   * this, and is counted nowhere.
   */
  async admit(workspaceId: string, email: unknown): Promise<void> {
    if (accountEmail(email) === null) return;
    const decision = await this.window.consume(
      `team-mail-recipient:${workspaceId}:${accountHash(email)}`,
      TEAM_EMAILS_PER_RECIPIENT,
      { guards: [{ bucket: `team-mail:${workspaceId}`, limit: TEAM_EMAILS_PER_WORKSPACE, reserve: true }] },
    );
    if ('stale' in decision) throw new Error('the team e-mail limit answered a token epoch');
    if (decision.allowed) return;
    throw rateLimited(
      decision.refusedByGuard
        ? `Too many invitation and reset e-mails from this workspace: at most ${TEAM_EMAILS_PER_WORKSPACE} an hour. Try again later.`
        : `Too many invitation and reset e-mails to this address: at most ${TEAM_EMAILS_PER_RECIPIENT} an hour. Try again later.`,
      decision.resetMs,
    );
  }
}
