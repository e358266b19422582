import { describe, expect, it } from '@jest/globals';
import { createWorkspace } from '@retention/domain';
import { useApi } from '../harness.js';
import { dashboardClient, makeUser, PASSWORD } from './support.js';

const api = useApi({ trustProxy: true });
const call = (...args: Parameters<ReturnType<typeof dashboardClient>>) => dashboardClient(api.current.url)(...args);

const signInFrom = (address: string, email: string, password: string) =>
  call('POST', '/session', { body: { email, password }, headers: { 'x-forwarded-for': address } });

describe("the account's failures under a burst of sign-ins", () => {
  it('check at most 100 passwords when 20 addresses each send 10 wrong ones at once', async () => {
    const workspace = await createWorkspace(api.current.db, { name: 'Burst' });
    const owner = await makeUser(api.current.db, workspace.id, 'owner');

    const replies = await Promise.all(
      Array.from({ length: 200 }, (_, i) => signInFrom(`192.0.2.${100 + (i % 20)}`, owner.email, `wrong ${i}`)),
    );
    const statuses = replies.map((reply) => reply.status);
    // A 401 is a password checked; the rest were refused before the check.
    expect(statuses.filter((status) => status === 401)).toHaveLength(100);
    expect(statuses.filter((status) => status === 429)).toHaveLength(100);
    // And it stays full: the owner's right password, from a new address, is refused too.
    expect((await signInFrom('192.0.2.200', owner.email, PASSWORD)).status).toBe(429);
  }, 300_000);

  it('take back the failure counted for an attempt whose password was right', async () => {
    const workspace = await createWorkspace(api.current.db, { name: 'BurstRelease' });
    const owner = await makeUser(api.current.db, workspace.id, 'owner');
    // 99 failures from ten addresses, then a success: 99 failures still, so one more is checked.
    for (let address = 0; address < 10; address += 1)
      for (let i = 0; i < (address === 9 ? 9 : 10); i += 1)
        expect((await signInFrom(`198.18.${address}.1`, owner.email, `wrong ${i}`)).status).toBe(401);
    expect((await signInFrom('198.18.20.1', owner.email, PASSWORD)).status).toBe(200);
    expect((await signInFrom('198.18.21.1', owner.email, 'wrong again')).status).toBe(401);
    expect((await signInFrom('198.18.22.1', owner.email, 'wrong again')).status).toBe(429);
    expect((await signInFrom('198.18.23.1', owner.email, PASSWORD)).status).toBe(429);
  }, 300_000);
});
