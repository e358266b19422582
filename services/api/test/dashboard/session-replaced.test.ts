import { describe, expect, it } from '@jest/globals';
import { useApi } from '../harness.js';
import { dashboardClient, PASSWORD, sessionCookieOf, signIn, team } from './support.js';

/**
 * A browser that signs in again, as anyone, by a password or by spending a link, has its
 * session replaced: the one its cookie named ends on the server too (startSession), as a
 * sign-out ends it. A copy of the old cookie value, taken before, is worth nothing after; the
 * person's sessions in other browsers go on.
 */
const api = useApi();
const call = (...args: Parameters<ReturnType<typeof dashboardClient>>) => dashboardClient(api.current.url)(...args);

const status = async (cookie: string) => (await call('GET', '/me', { cookie })).status;

describe('signing in over a session this browser holds', () => {
  it('as someone else ends that session; theirs in another browser goes on', async () => {
    const { owner, member } = await team(api.current.db, call, 'Replaced by another');
    const ownerElsewhere = await signIn(call, owner.email);
    const signedIn = await call('POST', '/session', {
      cookie: owner.cookie,
      body: { email: member.email, password: PASSWORD },
    });
    expect(signedIn.status).toBe(200);
    expect(signedIn.body.user.email).toBe(member.email);
    expect(await status(owner.cookie)).toBe(401);
    expect(await status(sessionCookieOf(signedIn))).toBe(200);
    expect(await status(ownerElsewhere)).toBe(200);
  });

  it('as the same person ends the session it replaces; theirs in another browser goes on', async () => {
    const { member } = await team(api.current.db, call, 'Replaced by oneself');
    const elsewhere = await signIn(call, member.email);
    const again = await call('POST', '/session', {
      cookie: member.cookie,
      body: { email: member.email, password: PASSWORD },
    });
    expect(again.status).toBe(200);
    expect(sessionCookieOf(again)).not.toBe(member.cookie);
    expect(await status(member.cookie)).toBe(401);
    expect(await status(sessionCookieOf(again))).toBe(200);
    expect(await status(elsewhere)).toBe(200);
  });

  it('a wrong password ends nothing: the browser keeps its session', async () => {
    const { owner, member } = await team(api.current.db, call, 'Not replaced');
    const refused = await call('POST', '/session', {
      cookie: owner.cookie,
      body: { email: member.email, password: 'not the password at all' },
    });
    expect(refused.status).toBe(401);
    expect(await status(owner.cookie)).toBe(200);
  });
});

describe('spending a reset link in a browser signed in as someone else', () => {
  it("ends that browser's session, and the log counts the reset account's sessions alone", async () => {
    const { owner, member } = await team(api.current.db, call, 'Reset elsewhere');
    const ownerElsewhere = await signIn(call, owner.email);
    const link = await call('POST', `/team/members/${member.id}/reset-link`, { cookie: owner.cookie });
    expect(link.status).toBe(200);
    // The owner opens the link they made in their own browser (to try it, or by mistake).
    const reset = await call('POST', `/password-reset/${link.body.reset_url.split('/').at(-1)}`, {
      cookie: owner.cookie,
      body: { password: 'the reset password' },
    });
    expect(reset.status).toBe(200);
    expect(reset.body.user.email).toBe(member.email);
    expect(await status(owner.cookie)).toBe(401);
    expect(await status(sessionCookieOf(reset))).toBe(200);
    expect(await status(ownerElsewhere)).toBe(200);
    // The member's one session ended with the reset; the owner's is no session of theirs.
    const log = await call('GET', '/security-log', { cookie: ownerElsewhere });
    const resets = (log.body.data as Array<{ action: string; details: Record<string, unknown> }>).filter(
      (event) => event.action === 'account.password_reset',
    );
    expect(resets.map((event) => event.details)).toEqual([{ sessions_ended: 1, link_made_by: owner.email }]);
  });

  it('signed in as the same person: the session ends with the reset, counted once', async () => {
    const { owner, member } = await team(api.current.db, call, 'Reset in place');
    const link = await call('POST', `/team/members/${member.id}/reset-link`, { cookie: owner.cookie });
    const reset = await call('POST', `/password-reset/${link.body.reset_url.split('/').at(-1)}`, {
      cookie: member.cookie,
      body: { password: 'the reset password' },
    });
    expect(reset.status).toBe(200);
    expect(await status(member.cookie)).toBe(401);
    expect(await status(sessionCookieOf(reset))).toBe(200);
    const log = await call('GET', '/security-log', { cookie: owner.cookie });
    const resets = (log.body.data as Array<{ action: string; details: Record<string, unknown> }>).filter(
      (event) => event.action === 'account.password_reset',
    );
    expect(resets.map((event) => event.details)).toEqual([{ sessions_ended: 1, link_made_by: owner.email }]);
  });
});
