import type { Db, Queryable } from '@retention/db';
import { parse as parseUserAgent } from 'bowser';
import type { AccountUserRow } from './account-user.js';
import { hashOpaqueValue, newOpaqueValue, OPAQUE_VALUE } from './opaque-values.js';

/**
 * Dashboard sessions: an opaque cookie value, only its SHA-256 stored. A session ends after
 * `idleMs` without a request or `maxAgeMs` after sign-in, whichever comes first, or when it is
 * revoked (sign out, sign out everywhere, a password change, removal from the team).
 */
export interface SessionLifetimes {
  idleMs: number;
  maxAgeMs: number;
}

export interface SessionRow {
  id: string;
  user_id: string;
  workspace_id: string;
  created_at: Date;
  last_seen_at: Date;
  idle_expires_at: Date;
  expires_at: Date;
  revoked_at: Date | null;
}

export async function createSession(
  db: Queryable,
  input: { user_id: string; workspace_id: string; ip?: string | null; user_agent?: string | null },
  lifetimes: SessionLifetimes,
): Promise<{ value: string; session: SessionRow }> {
  const { value, hash } = newOpaqueValue();
  const now = Date.now();
  const [session] = await db<SessionRow>('user_sessions')
    .insert({
      token_hash: hash,
      user_id: input.user_id,
      workspace_id: input.workspace_id,
      idle_expires_at: new Date(now + Math.min(lifetimes.idleMs, lifetimes.maxAgeMs)),
      expires_at: new Date(now + lifetimes.maxAgeMs),
      ip_address: input.ip ?? null,
      user_agent: input.user_agent?.slice(0, 512) ?? null,
    } as never)
    .returning('*');
  await db('users').where({ id: input.user_id }).update({ last_sign_in_at: db.fn.now() });
  return { value, session: session as SessionRow };
}

/** Refreshing last_seen on every request would write on every read; a minute is precise enough. */
const TOUCH_EVERY_MS = 60_000;

/**
 * The live session a cookie names, with its user; null when unknown, revoked or expired.
 * Sliding: each use pushes the idle expiry out, never past the absolute one.
 */
export async function loadSession(
  db: Db,
  value: string,
  lifetimes: SessionLifetimes,
): Promise<{ session: SessionRow; user: AccountUserRow } | null> {
  if (!OPAQUE_VALUE.test(value)) return null;
  const row = await whereLive(
    db,
    db('user_sessions as s').join('users as u', 'u.id', 's.user_id').where('s.token_hash', hashOpaqueValue(value)),
    's.',
  ).first<
    | (SessionRow & {
        u_id: string;
        email: string;
        name: string | null;
        role: AccountUserRow['role'];
        highest_former_role: AccountUserRow['highest_former_role'];
        password_hash: string | null;
        last_sign_in_at: Date | null;
        user_created_at: Date;
      })
    | undefined
  >(
    's.*',
    'u.id as u_id',
    'u.email',
    'u.name',
    'u.role',
    'u.highest_former_role',
    'u.password_hash',
    'u.last_sign_in_at',
    'u.created_at as user_created_at',
  );
  if (!row || row.workspace_id === undefined) return null;
  const now = Date.now();
  if (now - row.last_seen_at.getTime() > Math.min(TOUCH_EVERY_MS, lifetimes.idleMs / 4)) {
    const idle = new Date(Math.min(now + lifetimes.idleMs, row.expires_at.getTime()));
    await db('user_sessions')
      .where({ id: row.id })
      .update({ last_seen_at: new Date(now), idle_expires_at: idle });
  }
  return {
    session: {
      id: row.id,
      user_id: row.user_id,
      workspace_id: row.workspace_id,
      created_at: row.created_at,
      last_seen_at: row.last_seen_at,
      idle_expires_at: row.idle_expires_at,
      expires_at: row.expires_at,
      revoked_at: row.revoked_at,
    },
    user: {
      id: row.u_id,
      workspace_id: row.workspace_id,
      email: row.email,
      name: row.name,
      role: row.role,
      highest_former_role: row.highest_former_role,
      password_hash: row.password_hash,
      last_sign_in_at: row.last_sign_in_at,
      created_at: row.user_created_at,
    },
  };
}

/**
 * Sign out: ends the live sessions these cookie values name, and answers how many. Normally
 * one; a browser that sent the cookie more than once (a sibling subdomain's beside ours, over
 * plain http) asked to sign out all the same, and which value is ours cannot be told, so each
 * that names a live session ends (a planted one is its planter's, who loses nothing they may
 * keep). A value that names none ends nothing.
 */
export async function revokeSessionsNamedBy(db: Queryable, values: readonly string[]): Promise<number> {
  const hashes = values.filter((value) => OPAQUE_VALUE.test(value)).map(hashOpaqueValue);
  if (hashes.length === 0) return 0;
  return whereLive(db, db('user_sessions').whereIn('token_hash', hashes)).update({ revoked_at: db.fn.now() });
}

/** Revokes every session of a user not revoked yet, and answers how many. */
export async function revokeUserSessions(db: Queryable, userId: string): Promise<number> {
  return db('user_sessions').where({ user_id: userId }).whereNull('revoked_at').update({ revoked_at: db.fn.now() });
}

/**
 * Before a person's account is deleted from a team (removeMember): keeps the hash of each session
 * they still had, until it would have ended, so the next request of a page they left open is told
 * they were removed rather than that the session ended (docs/dashboard-api.md, "Removed from the
 * team"). Rows past their end, of any workspace, go at the same time: a removal is rare, and
 * nothing else writes here.
 */
export async function rememberRemovedSessions(db: Queryable, userId: string): Promise<void> {
  await db('removed_member_sessions').where('expires_at', '<=', db.fn.now()).delete();
  const live = whereLive(db, db('user_sessions').where({ user_id: userId })).select(
    'token_hash',
    'workspace_id',
    'expires_at',
  );
  await db.raw(
    `INSERT INTO removed_member_sessions (token_hash, workspace_id, expires_at) ? ON CONFLICT (token_hash) DO NOTHING`,
    [live],
  );
}

/** Whether a cookie that names no live session named one of a person since removed from the team. */
export async function isRemovedMemberSession(db: Queryable, value: string): Promise<boolean> {
  if (!OPAQUE_VALUE.test(value)) return false;
  const row = await db<{ token_hash: string }>('removed_member_sessions')
    .where({ token_hash: hashOpaqueValue(value) })
    .where('expires_at', '>', db.fn.now())
    .first('token_hash');
  return row !== undefined;
}

/** One of a user's own live sessions, as the Account page lists it (never its cookie or hash). */
export interface OwnSession {
  id: string;
  created_at: Date;
  last_seen_at: Date;
  ip_address: string | null;
  user_agent: string | null;
}

/** The user's live sessions (not revoked, neither idle nor absolute expiry passed), newest activity first. */
export async function listOwnSessions(db: Queryable, userId: string): Promise<OwnSession[]> {
  return whereLive(db, db('user_sessions').where({ user_id: userId }))
    .orderBy([
      { column: 'last_seen_at', order: 'desc' },
      { column: 'created_at', order: 'desc' },
      { column: 'id', order: 'desc' },
    ])
    .select<OwnSession[]>('id', 'created_at', 'last_seen_at', 'ip_address', 'user_agent');
}

/**
 * Ends one live session of the user, by its row id; answers whether it did (false: no live
 * session of theirs has that id, whoever else's it may be).
 */
export async function revokeOwnSessionById(db: Queryable, userId: string, sessionId: string): Promise<boolean> {
  const ended = await whereLive(db, db('user_sessions').where({ id: sessionId, user_id: userId })).update({
    revoked_at: db.fn.now(),
  });
  return ended > 0;
}

/**
 * A readable device from a User-Agent header: "Firefox on Windows", "Safari on iOS", "Chrome",
 * "Unknown device". The Account page needs a name a person recognizes, not a version. Which
 * browser and system a header names is Bowser's to say (a maintained parser that keeps up with
 * new browsers and the reduced headers, "Windows NT 10.0" for Windows 11 and "Android 10; K"
 * for any Android, which say the system and nothing finer): its names as it gives them, less a
 * browser name's " for <system>" when the system follows anyway ("Samsung Internet for Android").
 */
export function describeUserAgent(userAgent: string | null | undefined): string {
  if (!userAgent) return 'Unknown device';
  const { browser, os } = parseUserAgent(userAgent);
  const system = os.name || null;
  const name = (system ? browser.name?.replace(` for ${system}`, '') : browser.name) || null;
  if (name && system) return `${name} on ${system}`;
  return name ?? system ?? 'Unknown device';
}

/**
 * Narrows a query of user_sessions (its columns prefixed `prefix`, e.g. `s.`) to live sessions:
 * not revoked, neither its idle nor its absolute expiry passed. The one definition the look-up,
 * the lists and the revocations share.
 */
function whereLive<Q extends ReturnType<Db['queryBuilder']>>(db: Queryable, query: Q, prefix = ''): Q {
  return query
    .whereNull(`${prefix}revoked_at`)
    .where(`${prefix}idle_expires_at`, '>', db.fn.now())
    .where(`${prefix}expires_at`, '>', db.fn.now()) as Q;
}
