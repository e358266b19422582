import { describe, expect, it } from '@jest/globals';
import { createToken } from '@retention/domain';
import { RateLimitError } from '@retention/sdk';
import { useApi, workspaceWithToken } from '../../../services/api/test/harness.js';
import { rejectionOf } from '../../../services/api/test/client-helpers.js';

// A three-second window instead of a minute, so the waits stay short.
const WINDOW_MS = 3_000;
const api = useApi({ rateLimitWindowMs: WINDOW_MS });

async function limitedToken(perWindow: number, extra = {}): Promise<string> {
  const { workspaceId } = await workspaceWithToken(api.current, extra);
  const minted = await createToken(api.current.db, {
    workspace_id: workspaceId,
    name: 'small',
    rate_limit_per_minute: perWindow,
  });
  return minted.token;
}

/** Statuses the API logged for requests after `mark` (an index into its log). */
function statusesSince(mark: number): number[] {
  return api.current
    .logs()
    .slice(mark)
    .filter((line) => typeof line.status === 'number')
    .map((line) => line.status as number);
}

describe('a 429 from the API', () => {
  it('is waited out for Retry-After seconds, then the call succeeds', async () => {
    const client = api.current.client(await limitedToken(2));
    const mark = api.current.logs().length;
    await client.stats.retrieve();
    await client.stats.retrieve();
    const started = Date.now();
    const stats = await client.stats.retrieve();
    const waited = Date.now() - started;
    expect(stats.object).toBe('stats');
    expect(statusesSince(mark)).toEqual([200, 200, 429, 200]);
    expect(waited).toBeGreaterThanOrEqual(1_000);
    expect(waited).toBeLessThan(WINDOW_MS + 1_000);
    expect(client.rateLimit).toMatchObject({ limit: 2 });
  });

  it('with maxRetryWaitSeconds 0 is a RateLimitError at once, carrying Retry-After', async () => {
    const client = api.current.client(await limitedToken(1), { maxRetryWaitSeconds: 0 });
    await client.stats.retrieve();
    const started = Date.now();
    const error = await rejectionOf(client.stats.retrieve());
    expect(Date.now() - started).toBeLessThan(500);
    expect(error).toBeInstanceOf(RateLimitError);
    const limited = error as RateLimitError;
    expect(limited).toMatchObject({ type: 'rate_limit_exceeded', status: 429 });
    expect(limited.retryAfterSeconds).toBeGreaterThanOrEqual(1);
    expect(limited.retryAfterSeconds).toBeLessThanOrEqual(WINDOW_MS / 1000);
    expect(limited.message).toContain(`Retry in ${limited.retryAfterSeconds} second`);
    expect(limited.requestId).toMatch(/^req_/);
    expect(client.rateLimit).toMatchObject({ limit: 1, remaining: 0 });
  });

  it('is not waited for at all when Retry-After exceeds what is left of maxRetryWaitSeconds', async () => {
    const client = api.current.client(await limitedToken(1), { maxRetryWaitSeconds: 1 });
    await client.stats.retrieve();
    const mark = api.current.logs().length;
    const started = Date.now();
    const error = await rejectionOf(client.stats.retrieve());
    expect(error).toBeInstanceOf(RateLimitError);
    expect((error as RateLimitError).retryAfterSeconds).toBeGreaterThan(1);
    expect(Date.now() - started).toBeLessThan(500);
    expect(statusesSince(mark)).toEqual([429]);
  });

  it('does not stop an iteration over many pages: every row arrives once', async () => {
    const token = await limitedToken(2, {
      customers: [{ key: 'c', subscriptions: [{}] }],
      campaigns: Array.from({ length: 160 }, () => ({ customer: 'c' })),
    });
    const client = api.current.client(token);
    const mark = api.current.logs().length;
    const seen = new Set<string>();
    for await (const campaign of client.campaigns.all()) seen.add(campaign.id);
    expect(seen.size).toBe(160);
    const statuses = statusesSince(mark);
    expect(statuses.filter((status) => status === 200)).toHaveLength(4);
    expect(statuses).toContain(429);
  });
});
