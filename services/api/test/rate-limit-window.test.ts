import { describe, expect, it } from '@jest/globals';
import { createToken } from '@retention/domain';
import { useApi, workspaceWithToken } from './harness.js';

// A four-second window, so the test can watch it slide; production uses one minute.
const WINDOW_MS = 4_000;
const api = useApi({ rateLimitWindowMs: WINDOW_MS });

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('the sliding window', () => {
  it('does not count rejected requests: after waiting Retry-After seconds the next request succeeds', async () => {
    const { workspaceId } = await workspaceWithToken(api.current);
    const { token } = await createToken(api.current.db, {
      workspace_id: workspaceId,
      name: 'w',
      rate_limit_per_minute: 3,
    });
    for (let i = 0; i < 3; i += 1) expect((await api.current.get('/api/v1/stats', token)).status).toBe(200);

    // Keep hammering while limited: none of this may extend the wait.
    let last = await api.current.get('/api/v1/stats', token);
    for (let i = 0; i < 20; i += 1) {
      last = await api.current.get('/api/v1/stats', token);
      expect(last.status).toBe(429);
    }
    const retryAfter = Number(last.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(WINDOW_MS / 1000);
    await sleep(retryAfter * 1000);
    const after = await api.current.get('/api/v1/stats', token);
    expect(after.status).toBe(200);
  });

  it('frees capacity as old requests slide out, not all at once', async () => {
    const { workspaceId } = await workspaceWithToken(api.current);
    const { token } = await createToken(api.current.db, {
      workspace_id: workspaceId,
      name: 'slide',
      rate_limit_per_minute: 2,
    });
    expect((await api.current.get('/api/v1/stats', token)).status).toBe(200);
    await sleep(2_000);
    expect((await api.current.get('/api/v1/stats', token)).status).toBe(200);
    expect((await api.current.get('/api/v1/stats', token)).status).toBe(429);
    // The first request leaves the window ~2 s from now, the second ~4 s from now: waiting
    // a little over 2 s brings exactly one slot back.
    await sleep(2_300);
    const reopened = await api.current.get('/api/v1/stats', token);
    expect(reopened.status).toBe(200);
    expect(reopened.headers.get('x-ratelimit-remaining')).toBe('0');
    expect((await api.current.get('/api/v1/stats', token)).status).toBe(429);
  });

  it('reports Reset as the seconds until the oldest counted request leaves the window', async () => {
    const { workspaceId } = await workspaceWithToken(api.current);
    const { token } = await createToken(api.current.db, {
      workspace_id: workspaceId,
      name: 'reset',
      rate_limit_per_minute: 10,
    });
    expect((await api.current.get('/api/v1/stats', token)).headers.get('x-ratelimit-reset')).toBe('4');
    await sleep(1_200);
    // The oldest request is ~1.2 s old now: it leaves the window in under 3 s.
    const reset = Number((await api.current.get('/api/v1/stats', token)).headers.get('x-ratelimit-reset'));
    expect(reset).toBeGreaterThanOrEqual(1);
    expect(reset).toBeLessThanOrEqual(3);
  });
});
