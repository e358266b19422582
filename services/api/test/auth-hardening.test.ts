import { randomBytes } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import { failedAuthBucket } from '../src/middleware/failed-auth-guard.js';
import { useApi, workspaceWithToken } from './harness.js';

// One proxy in front: the client address is the X-Forwarded-For entry that proxy appended.
const api = useApi({ trustProxy: 1 });

const from = (address: string) => ({ headers: { 'x-forwarded-for': address } });
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
/** A token of the right shape that no workspace holds. */
const unknownToken = () => `sk_live_${Array.from(randomBytes(32), (byte) => BASE62[byte % 62]).join('')}`;

/** Runs `work` and returns how many queries the API's pool sent to PostgreSQL meanwhile. */
async function queriesDuring(work: () => Promise<void>): Promise<number> {
  let count = 0;
  const listener = () => (count += 1);
  api.current.db.on('query', listener);
  try {
    await work();
  } finally {
    api.current.db.off('query', listener);
  }
  return count;
}

describe('unknown tokens cost little', () => {
  it('refuses a limited address before any look-up: no PostgreSQL query per request', async () => {
    const address = '203.0.113.30';
    const whileCounting = await queriesDuring(async () => {
      for (let i = 0; i < 60; i += 1) {
        expect((await api.current.get('/api/v1/stats', unknownToken(), from(address))).status).toBe(401);
      }
    });
    expect(whileCounting).toBe(60);
    const started = performance.now();
    const whileLimited = await queriesDuring(async () => {
      for (let i = 0; i < 200; i += 1) {
        const reply = await api.current.get('/api/v1/stats', unknownToken(), from(address));
        expect(reply.status).toBe(429);
        expect(Number(reply.headers.get('retry-after'))).toBeGreaterThan(0);
      }
    });
    expect(whileLimited).toBe(0);
    console.log(
      `unknown-token flood from a limited address: 200 requests, ${whileLimited} PostgreSQL queries, ` +
        `${Math.round((200 / (performance.now() - started)) * 1000)} requests/s`,
    );
  });

  it('refuses values of the wrong length as unknown, without a look-up', async () => {
    const queries = await queriesDuring(async () => {
      for (const token of ['sk_live_short', `sk_live_${'a'.repeat(33)}`, `sk_live_${'a'.repeat(31)}-`]) {
        const reply = await api.current.get('/api/v1/stats', token, from('203.0.113.31'));
        expect(reply.status).toBe(401);
        expect(reply.body.error.type).toBe('invalid_token');
      }
    });
    expect(queries).toBe(0);
  });

  it('remembers an unknown hash for a moment: the same guess again costs no look-up', async () => {
    const token = unknownToken();
    const queries = await queriesDuring(async () => {
      for (const address of ['203.0.113.32', '203.0.113.33', '203.0.113.34']) {
        expect((await api.current.get('/api/v1/stats', token, from(address))).status).toBe(401);
      }
    });
    expect(queries).toBe(1);
  });
});

describe('failed-authentication buckets', () => {
  it('puts an IPv6 client’s whole /64 in one bucket, and another /64 in another', async () => {
    for (let i = 1; i <= 60; i += 1) {
      const reply = await api.current.get('/api/v1/stats', unknownToken(), from(`2001:db8:7:1::${i.toString(16)}`));
      expect(reply.status).toBe(401);
    }
    expect((await api.current.get('/api/v1/stats', unknownToken(), from('2001:db8:7:1:ffff::1'))).status).toBe(429);
    expect((await api.current.get('/api/v1/stats', unknownToken(), from('2001:db8:7:2::1'))).status).toBe(401);
    expect(failedAuthBucket('2001:db8:7:1:abcd::9')).toBe('auth-failures:2001:db8:7:1::/64');
    expect(failedAuthBucket('::ffff:192.0.2.1')).toBe('auth-failures:192.0.2.1');
    expect(failedAuthBucket('192.0.2.1')).toBe('auth-failures:192.0.2.1');
  });

  it('lets a token this process knows valid through an address locked out by a guesser behind the same NAT', async () => {
    const nat = '198.51.100.40';
    const { token: colleague } = await workspaceWithToken(api.current);
    const { token: neverUsed } = await workspaceWithToken(api.current);
    expect((await api.current.get('/api/v1/stats', colleague, from(nat))).status).toBe(200);
    for (let i = 0; i < 60; i += 1) await api.current.get('/api/v1/stats', unknownToken(), from(nat));
    expect((await api.current.get('/api/v1/stats', unknownToken(), from(nat))).status).toBe(429);
    // Known valid (cached): served, and counted in its own window.
    const served = await api.current.get('/api/v1/stats', colleague, from(nat));
    expect(served.status).toBe(200);
    expect(Number(served.headers.get('x-ratelimit-limit'))).toBe(100_000);
    // A token not seen yet is not distinguishable from a guess while the address is limited.
    expect((await api.current.get('/api/v1/stats', neverUsed, from(nat))).status).toBe(429);
  });
});
