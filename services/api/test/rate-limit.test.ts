import { randomBytes } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import { createToken } from '@retention/domain';
import { RateLimitError } from '@retention/sdk';
import { rejectionOf } from './client-helpers.js';
import { useApi, workspaceWithToken } from './harness.js';

// One proxy in front: the client address is the X-Forwarded-For entry that proxy appended.
const api = useApi({ trustProxy: 1 });

async function freshToken(limit?: number): Promise<string> {
  const { workspaceId } = await workspaceWithToken(api.current);
  const minted = await createToken(api.current.db, {
    workspace_id: workspaceId,
    name: 'limited',
    ...(limit && { rate_limit_per_minute: limit }),
  });
  return minted.token;
}

const headerNumber = (headers: Headers, name: string) => Number(headers.get(name));

describe('rate limit headers', () => {
  it('are on every response to an authenticated request, errors included, counting down', async () => {
    const token = await freshToken();
    const paths = [
      '/api/v1/campaigns',
      '/api/v1/campaigns?status=bogus',
      '/api/v1/customers/00000000-0000-4000-8000-000000000000',
      '/api/v1/nope',
      '/api/v1/stats',
    ];
    for (const [index, path] of paths.entries()) {
      const { headers } = await api.current.get(path, token);
      expect(headerNumber(headers, 'x-ratelimit-limit')).toBe(60);
      expect(headerNumber(headers, 'x-ratelimit-remaining')).toBe(59 - index);
      const reset = headerNumber(headers, 'x-ratelimit-reset');
      expect(reset).toBeGreaterThanOrEqual(59);
      expect(reset).toBeLessThanOrEqual(60);
      expect(headers.get('retry-after')).toBeNull();
    }
  });
});

describe('over the limit', () => {
  it('answers 429 rate_limit_exceeded with Retry-After and a message stating the limit and the wait', async () => {
    const token = await freshToken(5);
    for (let i = 0; i < 5; i += 1) expect((await api.current.get('/api/v1/stats', token)).status).toBe(200);
    const { status, body, headers } = await api.current.get('/api/v1/stats', token);
    expect(status).toBe(429);
    expect(body).toEqual({ error: { type: 'rate_limit_exceeded', message: expect.any(String) } });
    expect(body.error).not.toHaveProperty('retry_after_seconds');
    expect(body).not.toHaveProperty('retry_after_seconds');
    const retryAfter = headers.get('retry-after')!;
    expect(retryAfter).toMatch(/^\d+$/);
    expect(Number(retryAfter)).toBeGreaterThanOrEqual(1);
    expect(Number(retryAfter)).toBeLessThanOrEqual(60);
    expect(body.error.message).toContain('5 requests per minute');
    expect(body.error.message).toContain(`${retryAfter} second`);
    expect(headerNumber(headers, 'x-ratelimit-remaining')).toBe(0);
    expect(headerNumber(headers, 'x-ratelimit-limit')).toBe(5);
  });

  it('lets exactly 60 of 200 simultaneous requests through with a fresh token', async () => {
    const token = await freshToken();
    const statuses = await Promise.all(
      Array.from({ length: 200 }, () => api.current.get('/api/v1/campaigns', token).then((r) => r.status)),
    );
    expect(statuses.filter((status) => status === 200)).toHaveLength(60);
    expect(statuses.filter((status) => status === 429)).toHaveLength(140);
  });

  it('keeps the tokens of one workspace in separate windows', async () => {
    // Retrying off: the point is the 429 itself.
    const [first, second] = [await freshToken(2), await freshToken(2)].map((token) =>
      api.current.client(token, { maxRetryWaitSeconds: 0 }),
    );
    await first!.stats.retrieve();
    await first!.stats.retrieve();
    const limited = await rejectionOf(first!.stats.retrieve());
    expect(limited).toBeInstanceOf(RateLimitError);
    expect(limited.status).toBe(429);
    expect((await second!.stats.retrieve()).object).toBe('stats');
    expect(api.current.lastResponse().status).toBe(200);
  });
});

describe('failed authentication, per client address', () => {
  it('is limited to 60 a minute, then every request from that address gets 429, valid token or not', async () => {
    const token = await freshToken();
    const from = (address: string) => ({ headers: { 'x-forwarded-for': address } });
    for (let i = 0; i < 60; i += 1) {
      const { status, headers } = await api.current.get('/api/v1/campaigns', 'sk_live_guess' + i, from('203.0.113.7'));
      expect(status).toBe(401);
      expect(headerNumber(headers, 'x-ratelimit-remaining')).toBe(59 - i);
    }
    const guess = await api.current.get('/api/v1/campaigns', 'sk_live_guess', from('203.0.113.7'));
    expect(guess.status).toBe(429);
    expect(guess.body.error.message).toContain('failed authentication');
    expect(Number(guess.headers.get('retry-after'))).toBeGreaterThan(0);
    const missing = await api.current.get('/api/v1/campaigns', undefined, from('203.0.113.7'));
    expect(missing.status).toBe(429);
    // While the address is blocked, a valid token cannot tell a guess it succeeded.
    expect((await api.current.get('/api/v1/campaigns', token, from('203.0.113.7'))).status).toBe(429);
    // Other addresses are not affected.
    expect((await api.current.get('/api/v1/campaigns', token, from('198.51.100.1'))).status).toBe(200);
    expect((await api.current.get('/api/v1/campaigns', 'sk_live_guess', from('198.51.100.1'))).status).toBe(401);
  });

  it('counts against the address the proxy saw, whatever X-Forwarded-For entries the client prepends', async () => {
    const token = await freshToken();
    // The client writes every entry but the last; the proxy appends the address it saw.
    const spoofing = (seen: string) => ({
      headers: { 'x-forwarded-for': `${randomBytes(1)[0]}.${randomBytes(1)[0]}.0.1, 10.9.8.7, ${seen}` },
    });
    for (let i = 0; i < 60; i += 1) {
      const { status } = await api.current.get('/api/v1/campaigns', `sk_live_guess${i}`, spoofing('203.0.113.8'));
      expect(status).toBe(401);
    }
    const guess = await api.current.get('/api/v1/campaigns', 'sk_live_guess', spoofing('203.0.113.8'));
    expect(guess.status).toBe(429);
    expect(guess.body.error.message).toContain('failed authentication');
    expect((await api.current.get('/api/v1/campaigns', token, spoofing('203.0.113.8'))).status).toBe(429);
    // Naming the blocked address as an earlier hop does not make another client blocked either.
    expect(
      (
        await api.current.get('/api/v1/campaigns', token, {
          headers: { 'x-forwarded-for': '203.0.113.8, 198.51.100.2' },
        })
      ).status,
    ).toBe(200);
  });
});
