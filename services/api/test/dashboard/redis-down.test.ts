import { describe, expect, it } from '@jest/globals';
import { createSession, createWorkspace, revokeSessionsNamedBy } from '@retention/domain';
import { useApi } from '../harness.js';
import { dashboardClient, makeUser, PASSWORD } from './support.js';

/** With no Redis to count failed sign-ins, sign-in is refused rather than left unlimited. */
const api = useApi({ redisUrl: 'redis://127.0.0.1:1' });

describe('sign-in without Redis', () => {
  it('fails closed with the JSON error shape, no stack trace', async () => {
    const workspace = await createWorkspace(api.current.db, { name: 'NoRedis' });
    const user = await makeUser(api.current.db, workspace.id, 'owner');
    const reply = await dashboardClient(api.current.url)('POST', '/session', {
      body: { email: user.email, password: PASSWORD },
    });
    expect(reply.status).toBe(500);
    expect(reply.body.error.type).toBe('database_error');
    expect(reply.text).not.toMatch(/at .*\.ts/);
    expect(reply.headers.get('set-cookie')).toBeNull();
  });
});

describe('sessions without Redis', () => {
  it('are read from PostgreSQL at each request, so a revocation still applies at once', async () => {
    const workspace = await createWorkspace(api.current.db, { name: 'NoRedisSessions' });
    const user = await makeUser(api.current.db, workspace.id, 'owner');
    const { value } = await createSession(
      api.current.db,
      { user_id: user.id, workspace_id: workspace.id },
      { idleMs: 3_600_000, maxAgeMs: 3_600_000 },
    );
    const call = dashboardClient(api.current.url);
    const cookie = `retention_session=${value}`;
    for (let i = 0; i < 3; i += 1) expect((await call('GET', '/me', { cookie })).status).toBe(200);
    // No epoch to announce a change with: nothing was cached, so the next request sees it.
    expect(await revokeSessionsNamedBy(api.current.db, [value])).toBe(1);
    expect((await call('GET', '/me', { cookie })).status).toBe(401);
  });
});
