import { randomBytes } from 'node:crypto';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { loadConfig } from '@retention/core';
import { createDb, type Db } from '@retention/db';
import { createWorkspace } from '@retention/domain';
import { createLogger, createRedis, waitForRedis, type Redis } from '@retention/runtime';
import { redisKeyPrefix, runId, TEST_REDIS_URL, testSecretsKey, useTestDatabase } from '@retention/testkit';
import { createApp } from '../../src/app.js';
import { createApiServer } from '../../src/server.js';
import { dashboardClient, makeUser, PASSWORD, sessionCookieOf, signIn, type DashboardCall } from './support.js';

/**
 * The dashboard's session cache across API processes: two (and, for expiry, a third) API apps,
 * each with its own connection pool, Redis connection and cache, on one database and one Redis
 * key prefix, as replicas behind a load balancer are. A change made through one is in force at
 * the very next request through the other, though that one had the session cached.
 */
const database = useTestDatabase();
const prefix = `${redisKeyPrefix(runId())}-${randomBytes(4).toString('hex')}`;

interface Instance {
  call: DashboardCall;
  /** Queries this instance sent that read or wrote user_sessions. */
  sessionQueries(): number;
  close(): Promise<void>;
}

async function startInstance(env: Record<string, string> = {}): Promise<Instance> {
  const config = loadConfig({
    SECRETS_KEY: testSecretsKey(),
    DATABASE_URL: database.current.url,
    REDIS_URL: TEST_REDIS_URL,
    REDIS_KEY_PREFIX: prefix,
    ...env,
  });
  const logger = createLogger('api', 'silent');
  const redis: Redis = createRedis(config.redisUrl, 'command', 'session-cache-test');
  await waitForRedis(redis);
  const db: Db = createDb(config.databaseUrl, { poolMax: 4 });
  let sessionQueries = 0;
  db.on('query', (query: { sql: string }) => {
    if (query.sql.includes('user_sessions')) sessionQueries += 1;
  });
  const server: Server = createApiServer(createApp({ config, db, redis, logger }), logger, config);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    call: dashboardClient(`http://127.0.0.1:${(server.address() as AddressInfo).port}`),
    sessionQueries: () => sessionQueries,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      redis.disconnect();
      await db.destroy();
    },
  };
}

const instances: Instance[] = [];
let a: Instance;
let b: Instance;

beforeAll(async () => {
  a = await startInstance();
  b = await startInstance();
  instances.push(a, b);
});

afterAll(async () => {
  await Promise.all(instances.map((instance) => instance.close()));
});

async function people(name: string) {
  const workspace = await createWorkspace(database.current.db, { name });
  const owner = await makeUser(database.current.db, workspace.id, 'owner');
  const admin = await makeUser(database.current.db, workspace.id, 'admin');
  return { workspace, owner, admin };
}

/** Signs in through A and reads /me through both, so both have the session cached. */
async function cachedOnBoth(email: string, password = PASSWORD): Promise<string> {
  const cookie = await signIn(a.call, email, password);
  for (const instance of [a, b]) expect((await instance.call('GET', '/me', { cookie })).status).toBe(200);
  return cookie;
}

describe('a session look-up is cached', () => {
  it('serves repeated requests without reading user_sessions, while the epoch stands', async () => {
    const { owner } = await people('Cached');
    const cookie = await cachedOnBoth(owner.email);
    const before = b.sessionQueries();
    for (let i = 0; i < 20; i += 1) expect((await b.call('GET', '/me', { cookie })).status).toBe(200);
    expect(b.sessionQueries()).toBe(before);
  });
});

describe('changes reach the other API process at its very next request', () => {
  it('sign out', async () => {
    const { owner } = await people('Sign out');
    const cookie = await cachedOnBoth(owner.email);
    expect((await a.call('DELETE', '/session', { cookie })).status).toBe(204);
    const refused = await b.call('GET', '/me', { cookie });
    expect(refused.status).toBe(401);
    expect(refused.body.error.type).toBe('authentication_required');
  });

  it('sign out everywhere', async () => {
    const { owner } = await people('Everywhere');
    const phone = await cachedOnBoth(owner.email);
    const laptop = await cachedOnBoth(owner.email);
    expect((await b.call('POST', '/account/sign-out-everywhere', { cookie: laptop })).status).toBe(204);
    expect((await a.call('GET', '/me', { cookie: phone })).status).toBe(401);
    expect((await a.call('GET', '/me', { cookie: laptop })).status).toBe(401);
  });

  it('a password change ends every session, its own too, on both, and the new one works on both', async () => {
    const { owner } = await people('Password');
    const here = await cachedOnBoth(owner.email);
    const other = await cachedOnBoth(owner.email);
    const changed = await a.call('POST', '/account/password', {
      cookie: here,
      body: { current_password: PASSWORD, new_password: 'another long password' },
    });
    expect(changed.status).toBe(204);
    expect((await b.call('GET', '/me', { cookie: other })).status).toBe(401);
    expect((await b.call('GET', '/me', { cookie: here })).status).toBe(401);
    const renewed = sessionCookieOf(changed);
    expect((await b.call('GET', '/me', { cookie: renewed })).status).toBe(200);
    expect((await a.call('GET', '/me', { cookie: renewed })).status).toBe(200);
  });

  it('a role change: the next request on the other process is under the new role', async () => {
    const { owner, admin } = await people('Roles');
    const ownerCookie = await cachedOnBoth(owner.email);
    const adminCookie = await cachedOnBoth(admin.email);
    expect((await b.call('GET', '/me', { cookie: adminCookie })).body.permissions.manage_tokens).toBe(true);
    const changed = await a.call('PATCH', `/team/members/${admin.id}`, {
      cookie: ownerCookie,
      body: { role: 'member' },
    });
    expect(changed.status).toBe(200);
    const me = await b.call('GET', '/me', { cookie: adminCookie });
    expect(me.body.user.role).toBe('member');
    expect(me.body.permissions.manage_tokens).toBe(false);
    const refused = await b.call('POST', '/tokens', { cookie: adminCookie, body: { name: 'too late' } });
    expect(refused.status).toBe(403);
  });

  it('removal from the team', async () => {
    const { owner, admin } = await people('Removal');
    const ownerCookie = await cachedOnBoth(owner.email);
    const adminCookie = await cachedOnBoth(admin.email);
    expect((await a.call('DELETE', `/team/members/${admin.id}`, { cookie: ownerCookie })).status).toBe(204);
    expect((await b.call('GET', '/me', { cookie: adminCookie })).status).toBe(401);
    expect((await b.call('GET', '/tokens', { cookie: adminCookie })).status).toBe(401);
  });

  it('a password reset by link, and a name change', async () => {
    const { owner, admin } = await people('Reset');
    const ownerCookie = await cachedOnBoth(owner.email);
    const adminCookie = await cachedOnBoth(admin.email);
    const renamed = await b.call('PATCH', '/account', { cookie: adminCookie, body: { name: 'Ada Admin' } });
    expect(renamed.status).toBe(200);
    expect((await a.call('GET', '/me', { cookie: adminCookie })).body.user.name).toBe('Ada Admin');

    const link = await a.call('POST', `/team/members/${admin.id}/reset-link`, { cookie: ownerCookie });
    const token = String(link.body.reset_url).split('/').at(-1)!;
    expect((await a.call('POST', `/password-reset/${token}`, { body: { password: 'reset to this one' } })).status).toBe(
      200,
    );
    expect((await b.call('GET', '/me', { cookie: adminCookie })).status).toBe(401);
  });
});

describe('expiry with the cache', () => {
  let short: Instance;

  beforeAll(async () => {
    short = await startInstance({ SESSION_IDLE_TIMEOUT: '2s', SESSION_MAX_AGE: '5s' });
    instances.push(short);
  });

  const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

  it('use keeps pushing the idle expiry out; the absolute expiry ends it all the same', async () => {
    const { owner } = await people('Expiry');
    const cookie = await signIn(short.call, owner.email);
    const started = Date.now();
    // A request every 300 ms for 4 s: twice the idle timeout, and the session lives on.
    while (Date.now() - started < 4_000) {
      expect((await short.call('GET', '/me', { cookie })).status).toBe(200);
      await pause(300);
    }
    // Still in use, it ends at its absolute expiry (5 s after sign-in), cached or not.
    let status = 200;
    while (status === 200 && Date.now() - started < 8_000) {
      status = (await short.call('GET', '/me', { cookie })).status;
      if (status === 200) await pause(100);
    }
    expect(status).toBe(401);
    expect(Date.now() - started).toBeGreaterThanOrEqual(4_900);
    expect(Date.now() - started).toBeLessThan(6_000);
  });

  it('a session left idle past its timeout is refused, though it was cached', async () => {
    const { owner } = await people('Idle');
    const cookie = await signIn(short.call, owner.email);
    expect((await short.call('GET', '/me', { cookie })).status).toBe(200);
    await pause(2_300);
    expect((await short.call('GET', '/me', { cookie })).status).toBe(401);
  });
});
