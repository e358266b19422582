import { describe, expect, it } from '@jest/globals';
import type { CachedSession } from '../../src/dashboard/session-cache.js';
import { SESSION_CACHE_LIFETIME_MS, SessionCache } from '../../src/dashboard/session-cache.js';

/** How long one process may use a cached session look-up (the epoch check is the HTTP tests'). */
const NOW = Date.parse('2026-11-25T10:00:00Z');
const HOUR = 3_600_000;

function entry(idleExpiresIn: number, expiresIn: number, epoch = 'e1'): CachedSession {
  return {
    epoch,
    session: {
      id: 's',
      user_id: 'u',
      workspace_id: 'w',
      created_at: new Date(NOW - 1000),
      last_seen_at: new Date(NOW - 1000),
      idle_expires_at: new Date(NOW + idleExpiresIn),
      expires_at: new Date(NOW + expiresIn),
      revoked_at: null,
    },
    user: {
      id: 'u',
      workspace_id: 'w',
      email: 'a@example.com',
      name: 'A',
      role: 'owner',
      highest_former_role: null,
      password_hash: null,
      last_sign_in_at: null,
      created_at: new Date(NOW - 1000),
    },
  };
}

describe('SessionCache', () => {
  const lifetimes = { idleMs: 12 * HOUR, maxAgeMs: 7 * 24 * HOUR };

  it('keeps an entry for its lifetime, then forgets it', () => {
    const cache = new SessionCache(lifetimes);
    cache.set('k', entry(HOUR, 2 * HOUR), cache.generation, NOW);
    expect(cache.get('k', NOW + SESSION_CACHE_LIFETIME_MS - 1)?.epoch).toBe('e1');
    expect(cache.get('k', NOW + SESSION_CACHE_LIFETIME_MS)).toBeUndefined();
    expect(cache.size).toBe(0);
  });

  it('never past the idle or the absolute expiry it was read with', () => {
    const cache = new SessionCache(lifetimes);
    cache.set('idle', entry(2_000, HOUR), cache.generation, NOW);
    cache.set('absolute', entry(HOUR, 3_000), cache.generation, NOW);
    expect(cache.get('idle', NOW + 1_999)).toBeDefined();
    expect(cache.get('idle', NOW + 2_000)).toBeUndefined();
    expect(cache.get('absolute', NOW + 2_999)).toBeDefined();
    expect(cache.get('absolute', NOW + 3_000)).toBeUndefined();
    // Already expired: not kept at all.
    cache.set('gone', entry(-1, HOUR), cache.generation, NOW);
    expect(cache.get('gone', NOW)).toBeUndefined();
  });

  it('a short idle timeout shortens the lifetime to a quarter of it, so use keeps the idle expiry sliding', () => {
    const cache = new SessionCache({ idleMs: 8_000, maxAgeMs: HOUR });
    cache.set('k', entry(8_000, HOUR), cache.generation, NOW);
    expect(cache.get('k', NOW + 1_999)).toBeDefined();
    expect(cache.get('k', NOW + 2_000)).toBeUndefined();
  });

  it('drops the oldest entry when full', () => {
    const cache = new SessionCache(lifetimes, 2);
    cache.set('a', entry(HOUR, HOUR), cache.generation, NOW);
    cache.set('b', entry(HOUR, HOUR), cache.generation, NOW);
    cache.set('c', entry(HOUR, HOUR), cache.generation, NOW);
    expect(cache.get('a', NOW)).toBeUndefined();
    expect(cache.get('b', NOW)).toBeDefined();
    expect(cache.get('c', NOW)).toBeDefined();
  });

  it('does not keep a look-up that began before clear(): it may have read the session before the change', async () => {
    const cache = new SessionCache(lifetimes);
    // A look-up notes the generation, then waits on PostgreSQL while a change clears the cache.
    let answer: (looked: CachedSession) => void = () => {};
    const lookUp = (async () => {
      const generation = cache.generation;
      const looked = await new Promise<CachedSession>((resolve) => (answer = resolve));
      cache.set('k', looked, generation, NOW);
    })();
    cache.clear();
    answer(entry(HOUR, HOUR));
    await lookUp;
    expect(cache.get('k', NOW)).toBeUndefined();
    // One that began after it is kept.
    cache.set('k', entry(HOUR, HOUR), cache.generation, NOW);
    expect(cache.get('k', NOW)).toBeDefined();
  });

  it('keys by the SHA-256 of the cookie, never the cookie itself', () => {
    const value = 'x'.repeat(43);
    expect(SessionCache.key(value)).not.toContain(value);
    expect(SessionCache.key(value)).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });
});
