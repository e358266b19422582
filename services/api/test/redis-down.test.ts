import { beforeAll, describe, expect, it } from '@jest/globals';
import { loadFixtures, revokeToken } from '@retention/domain';
import { useApi } from './harness.js';
import { testSecretsKeyBytes } from '@retention/testkit';

// The API's Redis is a port where nothing listens: the rate limit cannot be decided.
const api = useApi({ redisUrl: 'redis://127.0.0.1:1' });

let token: string;
let doomed: { id: string; token: string };
beforeAll(async () => {
  const result = await loadFixtures(api.current.db, testSecretsKeyBytes(), {
    workspaces: [{ key: 'w', tokens: [{ key: 't', rate_limit: 1 }, { key: 'doomed' }] }],
  });
  token = result.workspaces.w!.tokens.t!.token;
  doomed = result.workspaces.w!.tokens.doomed!;
});

describe('Redis unreachable', () => {
  it('keeps serving, within this process’s share of the token’s limit, with the headers; a warning is logged', async () => {
    const first = await api.current.get('/api/v1/stats', token);
    expect(first.status).toBe(200);
    expect(first.headers.get('x-ratelimit-limit')).toBe('1');
    expect(first.headers.get('x-ratelimit-remaining')).toBe('0');
    // The token allows 1 a minute: the fallback window holds it (before: served without any limit).
    const second = await api.current.get('/api/v1/stats', token);
    expect(second.status).toBe(429);
    expect(Number(second.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(
      api.current.logs().some((line) => line.level === 'warn' && String(line.msg).includes('rate limit unavailable')),
    ).toBe(true);
    expect((await api.current.get('/api/v1/stats')).status).toBe(401);
  });

  it('keeps the token cache: one PostgreSQL look-up for many requests; a revocation waits out its 10 s', async () => {
    let lookups = 0;
    const count = (query: { sql: string }) => {
      if (/^select/i.test(query.sql) && query.sql.includes('api_tokens')) lookups += 1;
    };
    api.current.db.on('query', count);
    try {
      for (let i = 0; i < 5; i += 1) expect((await api.current.get('/api/v1/stats', doomed.token)).status).toBe(200);
    } finally {
      api.current.db.off('query', count);
    }
    // One token look-up for five requests (before: one each).
    expect(lookups).toBe(1);
    await revokeToken(api.current.db, { id: doomed.id }, { announce: () => Promise.resolve() });
    expect((await api.current.get('/api/v1/stats', doomed.token)).status).toBe(200);
  });

  it('limits failed authentications per address in this process', async () => {
    for (let i = 0; i < 61; i += 1) await api.current.get('/api/v1/stats', `sk_live_${'x'.repeat(31)}${i % 10}`);
    // Before: no limit at all while Redis was away, a 401 (and a look-up) for every guess.
    const reply = await api.current.get('/api/v1/stats', `sk_live_${'y'.repeat(32)}`);
    expect(reply.status).toBe(429);
    expect(reply.body.error.message).toContain('failed authentication');
  });
});
