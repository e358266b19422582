import { describe, expect, it } from '@jest/globals';
import { createWorkspace } from '@retention/domain';
import { useApi } from '../harness.js';
import { dashboardClient, makeUser, PASSWORD } from './support.js';

const api = useApi({ trustProxy: true });
const call = (...args: Parameters<ReturnType<typeof dashboardClient>>) => dashboardClient(api.current.url)(...args);

const signInFrom = (address: string, email: string, password: string) =>
  call('POST', '/session', { body: { email, password }, headers: { 'x-forwarded-for': address } });

describe("the account's failures under a burst of sign-ins", () => {
  it("check exactly 100 passwords when ten streams of wrong ones race the account's last failures", async () => {
    const workspace = await createWorkspace(api.current.db, { name: 'Burst' });
    const owner = await makeUser(api.current.db, workspace.id, 'owner');
    // Ten at a time (within the checks allowed at once), 200 in all, from 20 addresses (ten each,
    // within the pair's limit): whenever the account's failures are nearly full, nine others are
    // in flight. Counted only after each check, they all got past it (up to 109 checked).
    const statuses: number[] = [];
    await Promise.all(
      Array.from({ length: 10 }, async (_, stream) => {
        for (let i = 0; i < 20; i += 1) {
          const address = `192.0.2.${100 + stream * 2 + (i % 2)}`;
          statuses.push((await signInFrom(address, owner.email, `wrong ${stream} ${i}`)).status);
        }
      }),
    );
    // A 401 is a password checked; the rest were refused before the check.
    expect(statuses.filter((status) => status === 401)).toHaveLength(100);
    expect(statuses.filter((status) => status === 429)).toHaveLength(100);
    // And it stays full: the owner's right password, from a new address, is refused too.
    expect((await signInFrom('192.0.2.200', owner.email, PASSWORD)).status).toBe(429);
  }, 300_000);

  it('check at most 100 passwords when 20 addresses each send 10 wrong ones all at once', async () => {
    const workspace = await createWorkspace(api.current.db, { name: 'BurstAtOnce' });
    const owner = await makeUser(api.current.db, workspace.id, 'owner');
    const replies = await Promise.all(
      Array.from({ length: 200 }, (_, i) => signInFrom(`192.0.2.${100 + (i % 20)}`, owner.email, `wrong ${i}`)),
    );
    const statuses = replies.map((reply) => reply.status);
    // A 401 is a password checked; the rest were refused before the check (by the account's
    // failures, or by its checks running at once). Before: all 200 were checked.
    expect(statuses.filter((status) => status === 401).length).toBeLessThanOrEqual(100);
    expect(statuses.filter((status) => status !== 401 && status !== 429)).toEqual([]);
  }, 300_000);

  it('run at most ten password checks of one account at once: the rest are refused, not queued', async () => {
    const workspace = await createWorkspace(api.current.db, { name: 'BurstInFlight' });
    const owner = await makeUser(api.current.db, workspace.id, 'owner');
    // 40 at once from four addresses: within every window, so only the checks running at once refuse.
    const replies = await Promise.all(
      Array.from({ length: 40 }, (_, i) => signInFrom(`192.0.2.${150 + (i % 4)}`, owner.email, `wrong ${i}`)),
    );
    const refused = replies.filter((reply) => reply.status === 429);
    expect(refused.length).toBeGreaterThan(0);
    // Refused while the checks run (for at most 30 s): the wait in seconds, as in Retry-After.
    const wait = Number(refused[0]!.headers.get('retry-after'));
    expect(wait).toBeGreaterThan(0);
    expect(wait).toBeLessThanOrEqual(30);
    expect(refused[0]!.body.error.message).toBe(
      `Too many sign-in attempts. Try again in ${wait} second${wait === 1 ? '' : 's'}.`,
    );
    expect(replies.filter((reply) => reply.status === 401).length).toBeGreaterThanOrEqual(10);
    // Each ended check made room: the owner signs in now.
    expect((await signInFrom('192.0.2.160', owner.email, PASSWORD)).status).toBe(200);
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
