import { createHash } from 'node:crypto';
import type { AccountUserRow, SessionLifetimes, SessionRow } from '@retention/domain';
import { TtlCache } from '@retention/runtime';

/** A session look-up, and the session epoch it was read under. */
export interface CachedSession {
  session: SessionRow;
  user: AccountUserRow;
  epoch: string;
}

/** Entries are used this long at most after their look-up (less when the idle timeout is short). */
export const SESSION_CACHE_LIFETIME_MS = 10_000;

/**
 * Session look-ups of this API process, by the SHA-256 of the cookie (never the cookie itself),
 * so that a dashboard request costs one Redis round trip instead of a PostgreSQL join.
 * Revocation does not rest on this cache: every use is checked against the session epoch in
 * Redis (see sessionEpochKey in @retention/runtime), which every change to a session or its
 * user moves. Expiry does not rest on it either: an entry is never used past its session's idle
 * or absolute expiry as read, nor longer than SESSION_CACHE_LIFETIME_MS or a quarter of the idle
 * timeout, so a session in use is read again (and its idle expiry pushed out by loadSession) as
 * often as before the cache; a session left idle is read from PostgreSQL when it comes back.
 *
 * clear() starts a new generation. A look-up notes the generation before it reads, and its
 * result is cached (set) or served from the cache only while that is still the generation: a
 * look-up in flight across clear() may have read PostgreSQL before the change committed, under
 * an epoch that did not move (the change could not be announced), and must not put the ended
 * session back.
 */
export class SessionCache {
  private readonly entries: TtlCache<CachedSession>;
  private readonly lifetimeMs: number;
  private clears = 0;

  constructor(lifetimes: SessionLifetimes, maxEntries = 10_000) {
    this.entries = new TtlCache(maxEntries);
    this.lifetimeMs = Math.min(SESSION_CACHE_LIFETIME_MS, lifetimes.idleMs / 4);
  }

  static key(cookieValue: string): string {
    return createHash('sha256').update(cookieValue).digest('base64url');
  }

  get(key: string, now = Date.now()): CachedSession | undefined {
    return this.entries.get(key, now);
  }

  /** Which clear() the cache is at; a look-up notes it before reading, for set. */
  get generation(): number {
    return this.clears;
  }

  /** Keeps a look-up made in `generation`, unless the cache was cleared since it began. */
  set(key: string, entry: CachedSession, generation: number, now = Date.now()): void {
    if (generation !== this.clears) return;
    const usableUntil = Math.min(
      now + this.lifetimeMs,
      entry.session.idle_expires_at.getTime(),
      entry.session.expires_at.getTime(),
    );
    if (usableUntil <= now) return;
    this.entries.set(key, entry, usableUntil - now, now);
  }

  delete(key: string): void {
    this.entries.delete(key);
  }

  /** Forgets every look-up: a change could not be announced (session-change.ts). */
  clear(): void {
    this.clears += 1;
    this.entries.clear();
  }

  get size(): number {
    return this.entries.size;
  }
}
