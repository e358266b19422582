import { describe, expect, it } from '@jest/globals';
import { createWorkspace } from '@retention/domain';
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
