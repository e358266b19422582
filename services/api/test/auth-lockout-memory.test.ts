import { randomBytes } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import { useApi, workspaceWithToken } from './harness.js';

// One proxy in front: the client address is the X-Forwarded-For entry that proxy appended. Token
// look-ups are cached for 200 ms here (10 s in production), so a test can outlive one.
const api = useApi({ trustProxy: 1, tokenLookupMs: 200 });

const from = (address: string) => ({ headers: { 'x-forwarded-for': address } });
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const unknownToken = () => `sk_live_${Array.from(randomBytes(32), (byte) => BASE62[byte % 62]).join('')}`;
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('an address locked out by failed authentications', () => {
  // Behind a shared NAT, one client with a revoked token in a cron job fills the address's
  // window of failures; an integration that calls every few minutes from the same address must
  // still be served, though its look-up is no longer cached when it calls again.
  it('still serves a token this process found valid within the hour, after its cached look-up expired', async () => {
    const nat = '198.51.100.60';
    const { token: hourly } = await workspaceWithToken(api.current);
    expect((await api.current.get('/api/v1/stats', hourly, from(nat))).status).toBe(200);
    for (let i = 0; i < 60; i += 1) await api.current.get('/api/v1/stats', unknownToken(), from(nat));
    expect((await api.current.get('/api/v1/stats', unknownToken(), from(nat))).status).toBe(429);

    await pause(400); // the look-up's cache entry is gone; the address is still locked
    const served = await api.current.get('/api/v1/stats', hourly, from(nat));
    expect(served.status).toBe(200);
    expect(Number(served.headers.get('x-ratelimit-limit'))).toBe(100_000);
    expect((await api.current.get('/api/v1/stats', unknownToken(), from(nat))).status).toBe(429);
  });

  it('does not serve such a token once it is revoked', async () => {
    const nat = '198.51.100.61';
    const { token, ids } = await workspaceWithToken(api.current);
    expect((await api.current.get('/api/v1/stats', token, from(nat))).status).toBe(200);
    for (let i = 0; i < 60; i += 1) await api.current.get('/api/v1/stats', unknownToken(), from(nat));
    await api.current.db('api_tokens').where({ id: ids.tokens.t!.id }).update({ revoked_at: new Date() });
    await pause(400);
    const refused = await api.current.get('/api/v1/stats', token, from(nat));
    expect(refused.status).toBe(429);
    expect(refused.body.error.type).toBe('rate_limit_exceeded');
  });
});
