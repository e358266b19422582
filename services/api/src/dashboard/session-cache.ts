import { createHash } from 'node:crypto';
import type { AccountUserRow, SessionLifetimes, SessionRow } from '@retention/domain';

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
 */
export class SessionCache {
  private readonly entries = new Map<string, CachedSession & { usableUntil: number }>();
  private readonly lifetimeMs: number;

  constructor(
    lifetimes: SessionLifetimes,
    private readonly maxEntries = 10_000,
  ) {
    this.lifetimeMs = Math.min(SESSION_CACHE_LIFETIME_MS, lifetimes.idleMs / 4);
  }

  static key(cookieValue: string): string {
    return createHash('sha256').update(cookieValue).digest('base64url');
  }

  get(key: string, now = Date.now()): CachedSession | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (entry.usableUntil <= now) {
      this.entries.delete(key);
      return undefined;
    }
    return entry;
  }

  set(key: string, entry: CachedSession, now = Date.now()): void {
    const usableUntil = Math.min(
      now + this.lifetimeMs,
      entry.session.idle_expires_at.getTime(),
      entry.session.expires_at.getTime(),
    );
    if (usableUntil <= now) return;
    this.entries.delete(key);
    if (this.entries.size >= this.maxEntries) {
      // Maps iterate in insertion order: the first key is the oldest entry.
      this.entries.delete(this.entries.keys().next().value!);
    }
    this.entries.set(key, { ...entry, usableUntil });
  }

  delete(key: string): void {
    this.entries.delete(key);
  }

  get size(): number {
    return this.entries.size;
  }
}
