import { createHash, randomBytes } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import { createWorkspace } from '@retention/domain';
import { useApi } from '../harness.js';
import { dashboardClient, deviceCookieOf, makeUser, PASSWORD, sessionCookieOf } from './support.js';

const api = useApi({ trustProxy: true });
const call = (...args: Parameters<ReturnType<typeof dashboardClient>>) => dashboardClient(api.current.url)(...args);

const signInFrom = (address: string, email: string, password: string, cookie?: string) =>
  call('POST', '/session', { body: { email, password }, headers: { 'x-forwarded-for': address }, cookie });

/** 100 failed sign-ins to the account from ten addresses: its failures from all addresses are full. */
async function fillAccountFailures(email: string): Promise<void> {
  await Promise.all(
    Array.from({ length: 10 }, async (_, address) => {
      for (let i = 0; i < 10; i += 1)
        expect((await signInFrom(`192.0.2.${address + 10}`, email, `wrong password ${i}`)).status).toBe(401);
    }),
  );
}

/** 1 while the device cookie `name=value` names a live device, 0 once it is forgotten. */
const deviceRecordExists = (cookie: string) => {
  const id = createHash('sha256').update(cookie.split('=')[1]!).digest('base64url');
  return api.current.redis.exists(`${api.current.redisKeyPrefix}:device:${id}`);
};

describe('trusted devices (device cookies)', () => {
  it('let the owner sign in while strangers have filled the account, and nobody else', async () => {
    const workspace = await createWorkspace(api.current.db, { name: 'Devices' });
    const owner = await makeUser(api.current.db, workspace.id, 'owner');
    const other = await makeUser(api.current.db, workspace.id, 'member');

    const first = await signInFrom('198.51.100.30', owner.email, PASSWORD);
    expect(first.status).toBe(200);
    const device = deviceCookieOf(first);
    expect(device).toMatch(/^retention_device=[A-Za-z0-9_-]{43}$/);
    const flags = first.headers.getSetCookie().find((cookie) => cookie.startsWith('retention_device='))!;
    for (const flag of ['HttpOnly', 'SameSite=Lax', 'Path=/', `Max-Age=${90 * 24 * 3600}`])
      expect(flags).toContain(flag);
    // Only its hash is kept.
    const value = device.split('=')[1]!;
    const keys = await api.current.redis.keys(`${api.current.redisKeyPrefix}:*`);
    expect(keys.join(' ')).not.toContain(value);
    const othersDevice = deviceCookieOf(await signInFrom('198.51.100.30', other.email, PASSWORD));

    await fillAccountFailures(owner.email);

    // Without the cookie the owner is refused like anyone, from any address.
    const plain = await signInFrom('198.51.100.31', owner.email, PASSWORD);
    expect(plain.status).toBe(429);
    expect(plain.body.error.type).toBe('rate_limit_exceeded');
    // A made-up device cookie, or another account's, is no device of this account.
    const madeUp = `retention_device=${randomBytes(32).toString('base64url')}`;
    expect((await signInFrom('198.51.100.31', owner.email, PASSWORD, madeUp)).status).toBe(429);
    expect((await signInFrom('198.51.100.31', owner.email, PASSWORD, othersDevice)).status).toBe(429);
    expect((await signInFrom('198.51.100.31', owner.email, PASSWORD, `${device}x`)).status).toBe(429);

    // The owner's browser, from yet another address, signs in; and gets a new device cookie.
    const trusted = await signInFrom('198.51.100.32', owner.email, PASSWORD, device);
    expect(trusted.status).toBe(200);
    const renewed = deviceCookieOf(trusted);
    expect(renewed).not.toBe(device);
    // The value it replaced is forgotten: a copy of it taken earlier is worth nothing now.
    expect((await signInFrom('198.51.100.33', owner.email, PASSWORD, device)).status).toBe(429);
    expect((await signInFrom('198.51.100.33', owner.email, PASSWORD, renewed)).status).toBe(200);
  }, 180_000);

  it('allow a device five attempts past the account limit, then forget it', async () => {
    const workspace = await createWorkspace(api.current.db, { name: 'DeviceLimit' });
    const owner = await makeUser(api.current.db, workspace.id, 'owner');
    const device = deviceCookieOf(await signInFrom('198.51.100.40', owner.email, PASSWORD));
    await fillAccountFailures(owner.email);

    // Someone holding the cookie (its owner mistyping, or a thief) gets five guesses past the
    // account's limit, whatever addresses they come from ...
    for (let i = 0; i < 5; i += 1) {
      const guess = await signInFrom(`198.51.100.${41 + i}`, owner.email, `wrong guess ${i}`, device);
      expect(guess.status).toBe(401);
    }
    // ... and then none: the device is forgotten, the right password from it is refused too.
    const forgotten = await signInFrom('198.51.100.50', owner.email, PASSWORD, device);
    expect(forgotten.status).toBe(429);
    expect(forgotten.body.error.message).toBe('Too many sign-in attempts. Try again in 15 minutes.');
    expect((await signInFrom('198.51.100.51', owner.email, PASSWORD, device)).status).toBe(429);
    // Forgotten, not only paused: its record is gone, so it stays a stranger after the window.
    expect(await deviceRecordExists(device)).toBe(0);
  }, 180_000);

  it('forget a device at its fifth failure, however slowly they came: failures are counted for its life', async () => {
    const workspace = await createWorkspace(api.current.db, { name: 'DeviceLife' });
    const owner = await makeUser(api.current.db, workspace.id, 'owner');
    const device = deviceCookieOf(await signInFrom('198.51.100.70', owner.email, PASSWORD));
    for (let i = 0; i < 4; i += 1)
      expect((await signInFrom(`198.51.100.${71 + i}`, owner.email, `wrong ${i}`, device)).status).toBe(401);
    expect(await deviceRecordExists(device)).toBe(1);
    // The fifth failure forgets it at once (it used to take a sixth attempt in one 15-minute
    // window: five guesses every quarter of an hour for 90 days).
    expect((await signInFrom('198.51.100.75', owner.email, 'wrong 4', device)).status).toBe(401);
    expect(await deviceRecordExists(device)).toBe(0);
  }, 180_000);

  it("forget all the account's devices when its password is changed or reset, or it leaves the team", async () => {
    const workspace = await createWorkspace(api.current.db, { name: 'DeviceForgetAll' });
    const owner = await makeUser(api.current.db, workspace.id, 'owner');
    const member = await makeUser(api.current.db, workspace.id, 'member');
    const signedInA = await signInFrom('198.51.100.80', owner.email, PASSWORD);
    const sessionA = sessionCookieOf(signedInA);
    const deviceA = deviceCookieOf(signedInA);
    const deviceB = deviceCookieOf(await signInFrom('198.51.100.81', owner.email, PASSWORD));
    await fillAccountFailures(owner.email);

    // Browser A changes the password: browser B's device is forgotten, A is given a new one.
    const changed = await call('POST', '/account/password', {
      cookie: `${sessionA}; ${deviceA}`,
      body: { current_password: PASSWORD, new_password: 'a brand new password' },
      headers: { 'x-forwarded-for': '198.51.100.80' },
    });
    expect(changed.status).toBe(204);
    expect((await signInFrom('198.51.100.82', owner.email, 'a brand new password', deviceB)).status).toBe(429);
    expect((await signInFrom('198.51.100.82', owner.email, 'a brand new password', deviceA)).status).toBe(429);
    const renewedA = deviceCookieOf(changed);
    const signedInAgain = await signInFrom('198.51.100.83', owner.email, 'a brand new password', renewedA);
    expect(signedInAgain.status).toBe(200);
    const ownerSession = sessionCookieOf(signedInAgain);

    // A reset password: the member's devices are forgotten, the browser that set it trusted.
    const memberSignIn = await signInFrom('198.51.100.84', member.email, PASSWORD);
    const memberDevice = deviceCookieOf(memberSignIn);
    const link = await call('POST', `/team/members/${member.id}/reset-link`, { cookie: ownerSession });
    const token = String(link.body.reset_url).split('/').at(-1)!;
    const reset = await call('POST', `/password-reset/${token}`, {
      body: { password: 'the reset password' },
      headers: { 'x-forwarded-for': '198.51.100.86' },
    });
    expect(reset.status).toBe(200);
    expect(await deviceRecordExists(memberDevice)).toBe(0);
    const memberRenewed = deviceCookieOf(reset);
    expect(await deviceRecordExists(memberRenewed)).toBe(1);

    // Removed from the team: none of the member's devices is kept.
    const removed = await call('DELETE', `/team/members/${member.id}`, { cookie: ownerSession });
    expect(removed.status).toBe(204);
    expect(await deviceRecordExists(memberRenewed)).toBe(0);
  }, 180_000);

  it('keep only the newest ten devices of an account: an eleventh sign-in forgets the oldest', async () => {
    const workspace = await createWorkspace(api.current.db, { name: 'DeviceCount' });
    const owner = await makeUser(api.current.db, workspace.id, 'owner');
    const devices: string[] = [];
    // Each from its own address (the pair allows ten), and without a cookie: a new device each.
    for (let i = 0; i < 11; i += 1)
      devices.push(deviceCookieOf(await signInFrom(`198.51.100.${100 + i}`, owner.email, PASSWORD)));
    expect(await deviceRecordExists(devices[0]!)).toBe(0);
    for (const device of devices.slice(1)) expect(await deviceRecordExists(device)).toBe(1);
  }, 180_000);

  it("check every device cookie of the name sent: one set first by a sibling subdomain does not hide the owner's", async () => {
    const workspace = await createWorkspace(api.current.db, { name: 'DeviceShadow' });
    const owner = await makeUser(api.current.db, workspace.id, 'owner');
    const device = deviceCookieOf(await signInFrom('198.51.100.120', owner.email, PASSWORD));
    await fillAccountFailures(owner.email);
    // Over plain http a sibling can set a retention_device cookie that the browser sends first.
    const shadow = `retention_device=${randomBytes(32).toString('base64url')}`;
    const signedIn = await signInFrom('198.51.100.121', owner.email, PASSWORD, `${shadow}; ${device}`);
    expect(signedIn.status).toBe(200);
    // The owner's device is the one replaced: its old value is forgotten.
    expect(await deviceRecordExists(device)).toBe(0);
  }, 180_000);

  it('keep the other limits: a trusted device is still held by its address and by the pair', async () => {
    const workspace = await createWorkspace(api.current.db, { name: 'DevicePair' });
    const owner = await makeUser(api.current.db, workspace.id, 'owner');
    const address = '198.51.100.60';
    const device = deviceCookieOf(await signInFrom(address, owner.email, PASSWORD));
    // Ten attempts per account from one address, the trusted device's among them.
    for (let i = 0; i < 9; i += 1) expect((await signInFrom(address, owner.email, `wrong ${i}`)).status).toBe(401);
    expect((await signInFrom(address, owner.email, PASSWORD, device)).status).toBe(429);
  });
});
