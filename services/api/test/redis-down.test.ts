import { beforeAll, describe, expect, it } from '@jest/globals';
import { loadFixtures, revokeToken } from '@retention/domain';
import { useApi } from './harness.js';

// The API's Redis is a port where nothing listens: the rate limit cannot be decided.
const api = useApi({ redisUrl: 'redis://127.0.0.1:1' });

let token: string;
let doomed: { id: string; token: string };
beforeAll(async () => {
  const result = await loadFixtures(api.current.db, {
    workspaces: [{ key: 'w', tokens: [{ key: 't', rate_limit: 1 }, { key: 'doomed' }] }],
  });
  token = result.workspaces.w!.tokens.t!.token;
  doomed = result.workspaces.w!.tokens.doomed!;
});

describe('Redis unreachable', () => {
  it('fails open: requests are served without rate-limit headers, a warning is logged, nothing crashes', async () => {
    for (let i = 0; i < 3; i += 1) {
      const { status, headers } = await api.current.get('/api/v1/stats', token);
      expect(status).toBe(200);
      expect(headers.get('x-ratelimit-limit')).toBeNull();
    }
    expect(
      api.current.logs().some((line) => line.level === 'warn' && String(line.msg).includes('rate limit unavailable')),
    ).toBe(true);
    expect((await api.current.get('/api/v1/stats')).status).toBe(401);
  });

  it('serves no token from the cache, since no epoch can vouch for it: a revocation still applies at once', async () => {
    expect((await api.current.get('/api/v1/stats', doomed.token)).status).toBe(200);
    expect((await api.current.get('/api/v1/stats', doomed.token)).status).toBe(200);
    // Announcing is impossible with Redis away; the next request must see the revocation anyway.
    await revokeToken(api.current.db, doomed.id, () => Promise.resolve());
    expect((await api.current.get('/api/v1/stats', doomed.token)).status).toBe(401);
  });
});
