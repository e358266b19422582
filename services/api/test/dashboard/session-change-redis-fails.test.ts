import { afterEach, describe, expect, it } from '@jest/globals';
import { createWorkspace, requestPasswordReset } from '@retention/domain';
import { useApi } from '../harness.js';
import { dashboardClient, makeUser, sessionCookieOf, signIn, type Reply } from './support.js';

/**
 * Redis fails after a password change or reset has committed, before it is announced (the
 * session epoch) and before the account's trusted devices are forgotten. The change is saved,
 * so the answer says so; the sessions it ended stay ended. The API's own Redis connection is
 * closed for real (ioredis refuses every command on it), between the commit and the
 * announcement: the test holds the user's row locked, so the change waits in PostgreSQL until
 * the connection is closed.
 */
const api = useApi();
const call = () => dashboardClient(api.current.url);

/** Sends `request` while the user's row is locked; closes Redis once it waits there; lets it commit. */
async function withRedisClosedBeforeCommit(userId: string, request: () => Promise<Reply>): Promise<Reply> {
  const { db, redis } = api.current;
  const lock = await db.transaction();
  try {
    await lock('users').where({ id: userId }).forUpdate().select('id');
    const reply = request();
    await waitForLockWait();
    redis.disconnect();
    await lock.commit();
    return await reply;
  } catch (error) {
    await lock.rollback();
    throw error;
  }
}

async function waitForLockWait(): Promise<void> {
  for (let i = 0; i < 500; i += 1) {
    const { rows } = await api.current.db.raw<{ rows: Array<{ waiting: number }> }>(
      `select count(*)::int as waiting from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`,
    );
    if (rows[0]!.waiting > 0) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error('the request never waited on the locked row');
}

async function reconnectRedis(): Promise<void> {
  if (api.current.redis.status === 'end') await api.current.redis.connect();
}
afterEach(reconnectRedis);

const warned = (text: string) =>
  api.current.logs().some((line) => line.level === 'warn' && String(line.msg).includes(text));

describe('Redis fails after a committed session change', () => {
  it('a password change answers 204 with a new session; the old session is refused, here and once Redis is back', async () => {
    const workspace = await createWorkspace(api.current.db, { name: 'RedisFailsChange' });
    const user = await makeUser(api.current.db, workspace.id, 'owner');
    const old = await signIn(call(), user.email);
    // Cached by this process under the current epoch.
    expect((await call()('GET', '/me', { cookie: old })).status).toBe(200);

    const reply = await withRedisClosedBeforeCommit(user.id, () =>
      call()('POST', '/account/password', {
        cookie: old,
        body: { current_password: 'correct horse battery staple', new_password: 'a brand new password' },
      }),
    );
    // Before: 500, though the password had changed.
    expect(reply.status).toBe(204);
    const fresh = sessionCookieOf(reply);
    expect(warned('session change not announced')).toBe(true);
    expect(warned('trusted devices not forgotten')).toBe(true);

    // Without Redis, sessions are read from PostgreSQL.
    expect((await call()('GET', '/me', { cookie: old })).status).toBe(401);
    expect((await call()('GET', '/me', { cookie: fresh })).status).toBe(200);
    await reconnectRedis();
    expect((await call()('GET', '/me', { cookie: old })).status).toBe(401);
    expect((await call()('GET', '/me', { cookie: fresh })).status).toBe(200);
    await signIn(call(), user.email, 'a brand new password');
  });

  it('a password reset answers 200 and signs in; the sessions it ended stay ended', async () => {
    const workspace = await createWorkspace(api.current.db, { name: 'RedisFailsReset' });
    const user = await makeUser(api.current.db, workspace.id, 'member');
    const old = await signIn(call(), user.email);
    expect((await call()('GET', '/me', { cookie: old })).status).toBe(200);
    const link = await requestPasswordReset(api.current.db, user.email, 'http://localhost:3000');
    const token = link!.reset_url.split('/').at(-1)!;

    const reply = await withRedisClosedBeforeCommit(user.id, () =>
      call()('POST', `/password-reset/${token}`, { body: { password: 'the reset password' } }),
    );
    // Before: 500, though the link was spent and the password set.
    expect(reply.status).toBe(200);
    const fresh = sessionCookieOf(reply);
    // The epoch did not move, and nothing read the old session while Redis was away: its entry,
    // cached under the epoch of now, is refused only because this process dropped its cache.
    await reconnectRedis();
    expect((await call()('GET', '/me', { cookie: old })).status).toBe(401);
    expect((await call()('GET', '/me', { cookie: fresh })).status).toBe(200);
    await signIn(call(), user.email, 'the reset password');
  });
});
