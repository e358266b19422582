import { describe, expect, it } from '@jest/globals';
import { useApi } from '../harness.js';
import { dashboardClient, makeUser, ORIGIN, PASSWORD, sessionCookieOf, signIn, team } from './support.js';
import { createWorkspace, inviteMember, OPERATOR, requestPasswordReset } from '@retention/domain';
import { runCli } from '@retention/testkit';

const api = useApi({ trustProxy: true });
const call = (...args: Parameters<ReturnType<typeof dashboardClient>>) => dashboardClient(api.current.url)(...args);

describe('sign-in and sessions', () => {
  it('signs in with a cookie of the documented flags, answers /me with permissions, and signs out', async () => {
    const { workspace } = await team(api.current.db, call);
    const owner = await makeUser(api.current.db, workspace.id, 'owner');
    const reply = await call('POST', '/session', { body: { email: owner.email.toUpperCase(), password: PASSWORD } });
    expect(reply.status).toBe(200);
    expect(reply.headers.get('cache-control')).toBe('no-store');
    const setCookie = reply.headers.get('set-cookie')!;
    expect(setCookie).toMatch(/^retention_session=[A-Za-z0-9_-]{43};/);
    expect(setCookie).toMatch(/HttpOnly/);
    expect(setCookie).toMatch(/SameSite=Lax/);
    expect(setCookie).toMatch(/Path=\//);
    expect(reply.body.user).toMatchObject({ id: owner.id, object: 'user', email: owner.email, role: 'owner' });
    expect(reply.body.workspace).toEqual({
      id: workspace.id,
      name: 'Acme',
      display_currency: 'usd',
      processor_status: 'connected',
      processor_key_rejected: false,
      stripe_mode: null,
    });
    const cookie = sessionCookieOf(reply);
    // Only the hash is stored.
    const value = cookie.split('=')[1]!;
    const stored = await api.current.db('user_sessions').select('token_hash');
    expect(JSON.stringify(stored)).not.toContain(value);

    const me = await call('GET', '/me', { cookie });
    expect(me.status).toBe(200);
    expect(me.body.permissions).toMatchObject({
      read_tokens: true,
      manage_tokens: true,
      manage_workspace: true,
      assignable_roles: ['owner', 'admin', 'member'],
    });
    expect(me.body.event_types).toHaveLength(8);
    expect(me.body.user.last_sign_in_at).not.toBeNull();

    expect((await call('DELETE', '/session', { cookie })).status).toBe(204);
    const after = await call('GET', '/me', { cookie });
    expect(after.status).toBe(401);
    expect(after.body.error.type).toBe('authentication_required');
  });

  it('gives the same answer for a wrong password and an unknown email', async () => {
    const workspace = await createWorkspace(api.current.db, { name: 'W' });
    const user = await makeUser(api.current.db, workspace.id, 'member');
    const wrong = await call('POST', '/session', { body: { email: user.email, password: 'not the password' } });
    const unknown = await call('POST', '/session', {
      body: { email: 'nobody@example.com', password: 'not the password' },
    });
    expect(wrong.status).toBe(401);
    expect(unknown.status).toBe(401);
    expect(wrong.body).toEqual(unknown.body);
    expect(wrong.body.error.type).toBe('invalid_credentials');
  });

  it('refuses at sign-in a password longer than any password can be (256 characters), saying so, before any look-up', async () => {
    const workspace = await createWorkspace(api.current.db, { name: 'W' });
    const user = await makeUser(api.current.db, workspace.id, 'member');
    const signIn = (password: unknown) => call('POST', '/session', { body: { email: user.email, password } });
    for (const password of ['x'.repeat(257), 'x'.repeat(1025), '\u{1f511}'.repeat(257), 'x'.repeat(60_000)]) {
      const refused = await signIn(password);
      expect([password.length, refused.status]).toEqual([password.length, 400]);
      expect(refused.body.error).toEqual({
        type: 'invalid_param',
        param: 'password',
        message: 'password: must be 1 to 256 characters',
      });
    }
    expect((await signIn('')).body.error.message).toBe('password: must be 1 to 256 characters');
    expect((await signIn(42)).body.error.message).toBe('password: must be a string');
    // 256 characters, 512 UTF-16 code units: as long as a password may be, so checked (and wrong).
    for (const password of ['x'.repeat(256), '\u{1f511}'.repeat(256)]) {
      expect((await signIn(password)).body.error.type).toBe('invalid_credentials');
    }
  });

  it('refuses an expired session and a session revoked by sign out everywhere', async () => {
    const { member } = await team(api.current.db, call, 'Expiry');
    const second = await signIn(call, member.email);
    expect((await call('POST', '/account/sign-out-everywhere', { cookie: member.cookie })).status).toBe(204);
    expect((await call('GET', '/me', { cookie: second })).status).toBe(401);
    expect((await call('GET', '/me', { cookie: member.cookie })).status).toBe(401);

    const third = await signIn(call, member.email);
    await api.current
      .db('user_sessions')
      .where({ user_id: member.id })
      .whereNull('revoked_at')
      .update({ expires_at: new Date(Date.now() - 1000) });
    expect((await call('GET', '/me', { cookie: third })).status).toBe(401);
  });

  it('a password change ends every session and signs this browser in again under a new one', async () => {
    const { member } = await team(api.current.db, call, 'Passwords');
    const other = await signIn(call, member.email);
    const tooShort = await call('POST', '/account/password', {
      cookie: member.cookie,
      body: { current_password: PASSWORD, new_password: 'short' },
    });
    expect(tooShort.status).toBe(400);
    const wrongCurrent = await call('POST', '/account/password', {
      cookie: member.cookie,
      body: { current_password: 'nope nope nope', new_password: 'a brand new password' },
    });
    expect(wrongCurrent.status).toBe(400);
    // The field the refusal is about, for the page to show it there; the message as it was.
    expect(wrongCurrent.body.error).toEqual({
      type: 'invalid_param',
      message: 'current_password: is not your current password',
      param: 'current_password',
    });
    // The same password again changes nothing: refused at the new password's field, no session ends.
    const same = await call('POST', '/account/password', {
      cookie: member.cookie,
      body: { current_password: PASSWORD, new_password: PASSWORD },
    });
    expect(same.status).toBe(400);
    expect(same.body.error).toEqual({
      type: 'invalid_param',
      message: 'new_password: must differ from the current one',
      param: 'new_password',
    });
    expect((await call('GET', '/me', { cookie: other })).status).toBe(200);
    // A refusal of the request as a whole names no field.
    const notJson = await call('POST', '/account/password', { cookie: member.cookie, rawBody: '{not json' });
    expect(notJson.body.error).toEqual({ type: 'invalid_param', message: 'The request body is not valid JSON.' });
    const changed = await call('POST', '/account/password', {
      cookie: member.cookie,
      body: { current_password: PASSWORD, new_password: 'a brand new password' },
    });
    expect(changed.status).toBe(204);
    const renewed = sessionCookieOf(changed);
    expect(renewed).not.toBe(member.cookie);
    expect((await call('GET', '/me', { cookie: renewed })).status).toBe(200);
    // A thief holding the old cookie of this very browser loses it with the others.
    expect((await call('GET', '/me', { cookie: member.cookie })).status).toBe(401);
    expect((await call('GET', '/me', { cookie: other })).status).toBe(401);
    await signIn(call, member.email, 'a brand new password');
    const log = await api.current
      .db('security_events')
      .where({ action: 'account.password_changed', actor_user_id: member.id });
    expect(log).toHaveLength(1);
    // The other one; this browser's, ended too, goes on under a new session.
    expect(log[0].details).toEqual({ other_sessions_ended: 1 });
    expect(JSON.stringify(log)).not.toContain('a brand new password');
  });

  it('refuses cross-site changes: no Origin or a foreign one is 403 and changes nothing', async () => {
    const { member } = await team(api.current.db, call, 'Csrf');
    for (const origin of [null, 'https://evil.example', 'http://localhost:3001']) {
      const reply = await call('PATCH', '/account', { cookie: member.cookie, origin, body: { name: 'Hacked' } });
      expect(reply.status).toBe(403);
      expect(reply.body.error).toEqual({ type: 'forbidden', message: 'cross-site request refused' });
    }
    const me = await call('GET', '/me', { cookie: member.cookie, origin: null });
    expect(me.body.user.name).toBe('member person');
    expect(
      (await call('POST', '/session', { origin: null, body: { email: member.email, password: PASSWORD } })).status,
    ).toBe(403);
  });

  it('refuses bodies over 64 KB with 413, non-JSON and unknown keys with 400; keeps markup as text', async () => {
    const { member } = await team(api.current.db, call, 'Bodies');
    const huge = await call('PATCH', '/account', { cookie: member.cookie, body: { name: 'x'.repeat(1024 * 1024) } });
    expect(huge.status).toBe(413);
    expect(huge.body.error.type).toBe('payload_too_large');
    const broken = await call('PATCH', '/account', { cookie: member.cookie, rawBody: '{"name":' });
    expect(broken.status).toBe(400);
    const form = await call('PATCH', '/account', {
      cookie: member.cookie,
      rawBody: 'name=x',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(form.status).toBe(400);
    const extra = await call('PATCH', '/account', { cookie: member.cookie, body: { name: 'Ann', role: 'owner' } });
    expect(extra.status).toBe(400);
    expect(extra.body.error.message).toMatch(/^role:/);
    const markup = '<img src=x onerror=alert(1)>';
    const named = await call('PATCH', '/account', { cookie: member.cookie, body: { name: markup } });
    expect(named.status).toBe(200);
    expect(named.headers.get('content-type')).toMatch(/application\/json/);
    expect(named.body.user.name).toBe(markup);
  });
});

describe('a session cookie sent more than once', () => {
  it('is no session at all: a sibling subdomain cannot sign the browser in to its own session', async () => {
    const { owner, member } = await team(api.current.db, call, 'Shadowed');
    expect((await call('GET', '/me', { cookie: owner.cookie })).status).toBe(200);
    // Over plain http a sibling can set a retention_session cookie that the browser sends first:
    // the attacker's own session, planted in the owner's browser.
    for (const cookie of [`${member.cookie}; ${owner.cookie}`, `${owner.cookie}; ${member.cookie}`]) {
      const me = await call('GET', '/me', { cookie });
      expect(me.status).toBe(401);
      expect(me.body.error.type).toBe('authentication_required');
    }
  });

  it('signs out every live session it names: the person asked to sign out, whichever value is theirs', async () => {
    const { owner, admin, member } = await team(api.current.db, call, 'Shadowed sign-out');
    const [name] = owner.cookie.split('=');
    const signedOut = await call('DELETE', '/session', { cookie: `${member.cookie}; ${owner.cookie}` });
    expect(signedOut.status).toBe(204);
    expect(signedOut.headers.getSetCookie().some((cookie) => cookie.startsWith(`${name}=;`))).toBe(true);
    expect((await call('GET', '/me', { cookie: owner.cookie })).status).toBe(401);
    expect((await call('GET', '/me', { cookie: member.cookie })).status).toBe(401);
    // A value that names no session beside a live one: the live one ends.
    const madeUp = `${name}=${'A'.repeat(43)}`;
    expect((await call('DELETE', '/session', { cookie: `${madeUp}; ${admin.cookie}; ${name}=x` })).status).toBe(204);
    expect((await call('GET', '/me', { cookie: admin.cookie })).status).toBe(401);
  });
});

describe('sign-in limits', () => {
  it('limits one account from one address, without locking it for other addresses', async () => {
    const workspace = await createWorkspace(api.current.db, { name: 'Limits' });
    const owner = await makeUser(api.current.db, workspace.id, 'owner');
    const stranger = { 'x-forwarded-for': '203.0.113.20' };
    for (let i = 0; i < 10; i += 1) {
      const reply = await call('POST', '/session', {
        body: { email: owner.email, password: `wrong password ${i}` },
        headers: stranger,
      });
      expect(reply.status).toBe(401);
    }
    // The stranger's address is done with this account, the right password or not.
    const limited = await call('POST', '/session', {
      body: { email: owner.email, password: PASSWORD },
      headers: stranger,
    });
    expect(limited.status).toBe(429);
    expect(limited.body.error.type).toBe('rate_limit_exceeded');
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    // The owner, from anywhere else, is not.
    const elsewhere = await call('POST', '/session', {
      body: { email: owner.email, password: PASSWORD },
      headers: { 'x-forwarded-for': '198.51.100.7' },
    });
    expect(elsewhere.status).toBe(200);
    // An unknown address is limited the same way: the answer does not say whether it exists.
    for (let i = 0; i < 10; i += 1) {
      await call('POST', '/session', {
        body: { email: 'ghost@example.com', password: 'x' },
        headers: { 'x-forwarded-for': '192.0.2.1' },
      });
    }
    const ghost = await call('POST', '/session', {
      body: { email: 'ghost@example.com', password: 'x' },
      headers: { 'x-forwarded-for': '192.0.2.1' },
    });
    expect(ghost.status).toBe(429);
    expect(ghost.body).toEqual(limited.body);
  });

  it('counts an account from one IPv6 address by its /64', async () => {
    const workspace = await createWorkspace(api.current.db, { name: 'LimitsV6' });
    const owner = await makeUser(api.current.db, workspace.id, 'owner');
    for (let i = 0; i < 10; i += 1) {
      const reply = await call('POST', '/session', {
        body: { email: owner.email, password: `wrong password ${i}` },
        headers: { 'x-forwarded-for': `2001:db8:5:6::${(i + 1).toString(16)}` },
      });
      expect(reply.status).toBe(401);
    }
    const sameSubnet = await call('POST', '/session', {
      body: { email: owner.email, password: PASSWORD },
      headers: { 'x-forwarded-for': '2001:db8:5:6:ffff::9' },
    });
    expect(sameSubnet.status).toBe(429);
    const otherSubnet = await call('POST', '/session', {
      body: { email: owner.email, password: PASSWORD },
      headers: { 'x-forwarded-for': '2001:db8:5:7::9' },
    });
    expect(otherSubnet.status).toBe(200);
  });

  it("limits one account's failures from all addresses together, known or not", async () => {
    const workspace = await createWorkspace(api.current.db, { name: 'Distributed' });
    const owner = await makeUser(api.current.db, workspace.id, 'owner');
    // Ten addresses at once, each in turn: every one of the 100 is admitted whatever the order.
    const guessFrom = (email: string, network: string) =>
      Promise.all(
        Array.from({ length: 10 }, async (_, address) => {
          for (let i = 0; i < 10; i += 1) {
            const reply = await call('POST', '/session', {
              body: { email, password: `wrong password ${i}` },
              headers: { 'x-forwarded-for': `${network}.${address + 10}` },
            });
            expect(reply.status).toBe(401);
          }
        }),
      );
    // 100 failures from ten addresses, none of them over its own limits.
    await guessFrom(owner.email, '192.0.2');
    const limited = await call('POST', '/session', {
      body: { email: owner.email, password: PASSWORD },
      headers: { 'x-forwarded-for': '192.0.2.200' },
    });
    expect(limited.status).toBe(429);
    expect(limited.body.error.type).toBe('rate_limit_exceeded');
    // When to try again, in the message as in Retry-After: the failures' window is 15 minutes.
    expect(limited.body.error.message).toBe('Too many sign-in attempts. Try again in 15 minutes.');
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(14 * 60);
    expect(Number(limited.headers.get('retry-after'))).toBeLessThanOrEqual(15 * 60);
    // The address itself is not full: another account signs in from it.
    const other = await makeUser(api.current.db, workspace.id, 'member');
    const fromSame = await call('POST', '/session', {
      body: { email: other.email, password: PASSWORD },
      headers: { 'x-forwarded-for': '192.0.2.200' },
    });
    expect(fromSame.status).toBe(200);
    await guessFrom('nobody-here@example.com', '203.0.113');
    const ghost = await call('POST', '/session', {
      body: { email: 'nobody-here@example.com', password: 'x' },
      headers: { 'x-forwarded-for': '203.0.113.250' },
    });
    expect(ghost.status).toBe(429);
    expect(ghost.body).toEqual(limited.body);
    // 200 memory-hard password checks: as the fills in trusted-devices.test.ts, room on a loaded machine.
  }, 180_000);

  it('limits one address trying many accounts, IPv6 by its /64', async () => {
    for (let i = 0; i < 50; i += 1) {
      const reply = await call('POST', '/session', {
        body: { email: `someone${i}@example.com`, password: 'guess guess' },
        headers: { 'x-forwarded-for': `2001:db8:1:2::${(i + 1).toString(16)}` },
      });
      expect(reply.status).toBe(401);
    }
    const sameSubnet = await call('POST', '/session', {
      body: { email: 'fresh@example.com', password: 'guess guess' },
      headers: { 'x-forwarded-for': '2001:db8:1:2:ffff::9' },
    });
    expect(sameSubnet.status).toBe(429);
    const otherSubnet = await call('POST', '/session', {
      body: { email: 'fresh@example.com', password: 'guess guess' },
      headers: { 'x-forwarded-for': '2001:db8:1:3::9' },
    });
    expect(otherSubnet.status).toBe(401);
  });
});

describe('limits on guessing beyond sign-in', () => {
  it('refuses an address whose made-up links filled its window of failures, for links and sign-in alike', async () => {
    const { member } = await team(api.current.db, call, 'LinkGuesses');
    const from = { 'x-forwarded-for': '198.51.100.60' };
    const madeUp = (i: number) => `${String(i).padStart(2, '0')}${'A'.repeat(41)}`;
    for (let i = 0; i < 25; i += 1) {
      const accept = await call('POST', `/invitations/${madeUp(i)}/accept`, {
        body: { name: 'Guess', password: 'a long enough password' },
        headers: from,
      });
      expect(accept.status).toBe(404);
      const reset = await call('POST', `/password-reset/${madeUp(i)}`, {
        body: { password: 'a long enough password' },
        headers: from,
      });
      expect(reset.status).toBe(404);
    }
    const limited = await call('POST', `/invitations/${madeUp(99)}/accept`, {
      body: { name: 'Guess', password: 'a long enough password' },
      headers: from,
    });
    expect(limited.status).toBe(429);
    expect(limited.body.error.type).toBe('rate_limit_exceeded');
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    const signIn = await call('POST', '/session', { body: { email: member.email, password: PASSWORD }, headers: from });
    expect(signIn.status).toBe(429);
    const elsewhere = await call('POST', '/session', {
      body: { email: member.email, password: PASSWORD },
      headers: { 'x-forwarded-for': '198.51.100.61' },
    });
    expect(elsewhere.status).toBe(200);
  });

  it('limits checks of the current password to ten per account in the window', async () => {
    const { member } = await team(api.current.db, call, 'PasswordGuesses');
    for (let i = 0; i < 10; i += 1) {
      const wrong = await call('POST', '/account/password', {
        cookie: member.cookie,
        body: { current_password: `guess number ${i}`, new_password: 'a brand new password' },
        headers: { 'x-forwarded-for': `203.0.113.${100 + i}` },
      });
      expect(wrong.status).toBe(400);
    }
    const limited = await call('POST', '/account/password', {
      cookie: member.cookie,
      body: { current_password: PASSWORD, new_password: 'a brand new password' },
    });
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    await signIn(call, member.email);
  });
});

describe('invitations and password reset', () => {
  it('invites, shows, accepts once, and signs the new person in', async () => {
    const { owner, workspace } = await team(api.current.db, call, 'Invites');
    const invited = await call('POST', '/team/invitations', {
      cookie: owner.cookie,
      body: { email: 'new@example.com', role: 'admin' },
    });
    expect(invited.status).toBe(201);
    expect(invited.body.emailed).toBe(false);
    expect(invited.body.invite_url).toMatch(/^http:\/\/localhost:3000\/dashboard\/invite\/[A-Za-z0-9_-]{43}$/);
    const token = invited.body.invite_url.split('/').at(-1);
    const shown = await call('GET', `/invitations/${token}`);
    expect(shown.body).toMatchObject({ email: 'new@example.com', role: 'admin', workspace_name: 'Invites' });
    const weak = await call('POST', `/invitations/${token}/accept`, { body: { name: 'New', password: 'short' } });
    expect(weak.status).toBe(400);
    const accepted = await call('POST', `/invitations/${token}/accept`, {
      body: { name: '<b>New</b>', password: 'a long enough password' },
    });
    expect(accepted.status).toBe(200);
    expect(accepted.body.user).toMatchObject({ email: 'new@example.com', role: 'admin', name: '<b>New</b>' });
    expect(accepted.body.workspace.id).toBe(workspace.id);
    const me = await call('GET', '/me', { cookie: sessionCookieOf(accepted) });
    expect(me.status).toBe(200);
    const reused = await call('POST', `/invitations/${token}/accept`, {
      body: { name: 'Again', password: 'a long enough password' },
    });
    expect(reused.status).toBe(404);
    expect((await call('GET', `/invitations/${token}`)).status).toBe(404);
    const joined = await api.current.db('security_events').where({ workspace_id: workspace.id, action: 'team.joined' });
    expect(joined).toHaveLength(1);
    const links = await api.current.db('account_links').select('token_hash');
    expect(JSON.stringify(links)).not.toContain(token);
  });

  it('refuses to invite who is already a member in a sentence, and tells an inviter their own address is them', async () => {
    const { owner, admin } = await team(api.current.db, call, 'Invite myself');
    const invite = (cookie: string, email: string) =>
      call('POST', '/team/invitations', { cookie, body: { email, role: 'member' } });
    const myself = await invite(owner.cookie, owner.email.toUpperCase());
    expect(myself.status).toBe(409);
    expect(myself.body.error).toEqual({
      type: 'conflict',
      message: 'That is you: you are already an owner of this workspace.',
    });
    const colleague = await invite(owner.cookie, admin.email);
    expect(colleague.body.error).toEqual({
      type: 'conflict',
      message: `${admin.email} is already a member of this workspace.`,
    });
    const gone = await call('DELETE', '/team/invitations/00000000-0000-4000-8000-000000000000', {
      cookie: owner.cookie,
    });
    expect(gone.body.error).toEqual({
      type: 'not_found',
      message: 'This invitation is no longer pending: it was accepted or canceled.',
    });
    const nobody = await call('PATCH', '/team/members/00000000-0000-4000-8000-000000000000', {
      cookie: owner.cookie,
      body: { role: 'admin' },
    });
    expect(nobody.body.error).toEqual({
      type: 'not_found',
      message: 'This person is no longer in the workspace.',
    });
  });

  it('refuses expired and revoked invitations', async () => {
    const { owner } = await team(api.current.db, call, 'Expired');
    const first = await call('POST', '/team/invitations', {
      cookie: owner.cookie,
      body: { email: 'late@example.com', role: 'member' },
    });
    const token = first.body.invite_url.split('/').at(-1);
    await api.current
      .db('account_links')
      .where({ id: first.body.invitation.id })
      .update({ expires_at: new Date(Date.now() - 1) });
    expect(
      (
        await call('POST', `/invitations/${token}/accept`, {
          body: { name: 'Late', password: 'a long enough password' },
        })
      ).status,
    ).toBe(404);

    const second = await call('POST', '/team/invitations', {
      cookie: owner.cookie,
      body: { email: 'gone@example.com', role: 'member' },
    });
    const secondToken = second.body.invite_url.split('/').at(-1);
    expect(
      (await call('DELETE', `/team/invitations/${second.body.invitation.id}`, { cookie: owner.cookie })).status,
    ).toBe(204);
    expect((await call('GET', `/invitations/${secondToken}`)).status).toBe(404);
    expect((await call('GET', '/invitations/not-a-token')).status).toBe(404);
  });

  it('a reset link from the team page sets a password once and ends every session', async () => {
    const { owner, member } = await team(api.current.db, call, 'Reset');
    const link = await call('POST', `/team/members/${member.id}/reset-link`, { cookie: owner.cookie });
    expect(link.status).toBe(200);
    const token = link.body.reset_url.split('/').at(-1);
    expect((await call('GET', `/password-reset/${token}`)).body.email).toBe(member.email);
    const done = await call('POST', `/password-reset/${token}`, { body: { password: 'the reset password' } });
    expect(done.status).toBe(200);
    expect((await call('GET', '/me', { cookie: member.cookie })).status).toBe(401);
    expect((await call('POST', `/password-reset/${token}`, { body: { password: 'the reset password' } })).status).toBe(
      404,
    );
    await signIn(call, member.email, 'the reset password');
    // The security log tells a link made (by the owner) from a password actually reset (by the
    // member's account, with the link the owner made).
    const log = await call('GET', '/security-log', { cookie: owner.cookie });
    const resets = (
      log.body.data as Array<{ action: string; actor: { user_id: string }; details: Record<string, unknown> }>
    ).filter((event) => event.action.startsWith('account.'));
    expect(resets.map((event) => [event.action, event.actor.user_id, event.details])).toEqual([
      ['account.password_reset', member.id, { sessions_ended: 1, link_made_by: owner.email }],
      ['account.reset_link_created', owner.id, {}],
    ]);
    // Without SMTP_URL the answer says that nothing is emailed, to anyone (not whether the address has an account).
    for (const email of ['nobody@example.com', member.email]) {
      const asked = await call('POST', '/password-reset', { body: { email } });
      expect(asked.status).toBe(202);
      expect(asked.body).toEqual({ accepted: true, emailed: false });
    }
    // Asked before any address, for Forgot password to say so first; no session needed.
    const options = await call('GET', '/password-reset');
    expect([options.status, options.body]).toEqual([200, { object: 'password_reset_options', emails: false }]);
  });

  it("a reset link from the operator CLI: the reset names the operator CLI as the link's maker; one asked for names none", async () => {
    const { owner, admin, member } = await team(api.current.db, call, 'CLI reset');
    const made = await runCli(['user', 'reset-link', '--id', member.id], { DATABASE_URL: api.current.databaseUrl });
    expect(made.code).toBe(0);
    const byOperator = made.json.reset_url.split('/').at(-1);
    // Forgot password: the holder asked (the link is emailed; here the domain function hands it
    // over).
    const asked = await requestPasswordReset(api.current.db, admin.email, 'https://retention.test');
    const byHolder = asked!.reset_url.split('/').at(-1);
    for (const token of [byOperator, byHolder]) {
      expect(
        (await call('POST', `/password-reset/${token}`, { body: { password: 'the reset password' } })).status,
      ).toBe(200);
    }
    const log = await call('GET', '/security-log', { cookie: owner.cookie });
    const entries = (
      log.body.data as Array<{
        action: string;
        actor: { type: string; label: string | null };
        target: { id: string } | null;
        details: Record<string, unknown>;
      }>
    ).filter((event) => event.action.startsWith('account.'));
    expect(entries.map((event) => [event.action, event.actor.type, event.target?.id, event.details])).toEqual([
      ['account.password_reset', 'user', admin.id, { sessions_ended: 1 }],
      ['account.password_reset', 'user', member.id, { sessions_ended: 1, link_made_by: 'operator CLI' }],
      ['account.reset_link_created', 'operator', member.id, {}],
    ]);
  });

  it('without email, makes no reset link for oneself: it would set a password without the current one', async () => {
    const { owner, admin } = await team(api.current.db, call, 'Own link');
    for (const [person, forgotten] of [
      [owner, 'ask whoever runs this service for one'],
      [admin, 'ask an owner for a reset link'],
    ] as const) {
      const refused = await call('POST', `/team/members/${person.id}/reset-link`, { cookie: person.cookie });
      expect(refused.status).toBe(403);
      expect(refused.body.error.message).toBe(
        'Change your own password on the Account page, which asks for the current one: this service sends no email, ' +
          `and a reset link shown here would let anyone at this screen set a password without it. If you have forgotten it, ${forgotten}.`,
      );
      expect(await api.current.db('account_links').where({ kind: 'password_reset', user_id: person.id })).toEqual([]);
    }
    const listed = await call('GET', '/team', { cookie: owner.cookie });
    const own = listed.body.members.find((member: { id: string }) => member.id === owner.id);
    expect(own.can_make_reset_link).toBe(false);
    // Their sessions go on: nothing was reset.
    expect((await call('GET', '/me', { cookie: owner.cookie })).status).toBe(200);
  });

  it('a reset link whose address has since taken a password in another workspace answers 409, not 500, and stays unspent', async () => {
    const { owner, workspace } = await team(api.current.db, call, 'Address taken');
    const [support] = await api.current
      .db('users')
      .insert({ workspace_id: workspace.id, email: `support-${workspace.id.slice(0, 8)}@example.com`, role: 'member' })
      .returning(['id', 'email']);
    const made = await call('POST', `/team/members/${support.id}/reset-link`, { cookie: owner.cookie });
    expect(made.status).toBe(200);
    const token = made.body.reset_url.split('/').at(-1);
    // Another workspace's account with the same address takes a password meanwhile.
    const elsewhere = await createWorkspace(api.current.db, { name: 'Elsewhere' });
    await makeUser(api.current.db, elsewhere.id, 'owner', support.email.toUpperCase());
    for (let attempt = 0; attempt < 2; attempt++) {
      const used = await call('POST', `/password-reset/${token}`, { body: { password: 'a long new password' } });
      expect(used.status).toBe(409);
      expect(used.body.error).toEqual({
        type: 'conflict',
        message: 'This link cannot set a password for this email address; ask whoever runs this service.',
      });
    }
    expect((await call('GET', `/password-reset/${token}`)).status).toBe(200);
    const [account] = await api.current.db('users').where({ id: support.id }).select('password_hash');
    expect(account.password_hash).toBeNull();
  });

  it("without email, a reset link to copy is made only for a role below one's own, and /me says for which", async () => {
    const { owner, admin, member, workspace } = await team(api.current.db, call, 'No mail');
    expect((await call('GET', '/me', { cookie: admin.cookie })).body.permissions.reset_link_roles).toEqual(['member']);
    expect((await call('GET', '/me', { cookie: owner.cookie })).body.permissions.reset_link_roles).toEqual([
      'admin',
      'member',
    ]);
    const colleague = await makeUser(api.current.db, workspace.id, 'admin');
    const refused = await call('POST', `/team/members/${colleague.id}/reset-link`, { cookie: admin.cookie });
    expect(refused.status).toBe(403);
    expect(refused.body.error.type).toBe('forbidden');
    expect(await api.current.db('account_links').where({ kind: 'password_reset', user_id: colleague.id })).toEqual([]);
    const partner = await makeUser(api.current.db, workspace.id, 'owner');
    expect((await call('POST', `/team/members/${partner.id}/reset-link`, { cookie: owner.cookie })).status).toBe(403);

    const forMember = await call('POST', `/team/members/${member.id}/reset-link`, { cookie: admin.cookie });
    expect(forMember.body).toMatchObject({ emailed: false, reset_url: expect.stringMatching(/\/dashboard\/reset\//) });
    const forAdmin = await call('POST', `/team/members/${colleague.id}/reset-link`, { cookie: owner.cookie });
    expect(forAdmin.body).toMatchObject({ emailed: false, reset_url: expect.stringMatching(/\/dashboard\/reset\//) });
  });

  it('an admin can neither take over an owner who has no password yet nor replace an owner-level invitation', async () => {
    const { owner, admin, workspace } = await team(api.current.db, call, 'Takeover');
    // As `user create` leaves an owner until they accept their link.
    const [waiting] = await api.current
      .db('users')
      .insert({ workspace_id: workspace.id, email: 'founder@example.com', role: 'owner', name: null })
      .returning('id');
    const takeover = await call('POST', '/team/invitations', {
      cookie: admin.cookie,
      body: { email: 'FOUNDER@example.com', role: 'admin' },
    });
    expect(takeover.status).toBe(403);
    expect(takeover.body.error.type).toBe('forbidden');

    const ownerInvite = await call('POST', '/team/invitations', {
      cookie: owner.cookie,
      body: { email: 'partner@example.com', role: 'owner' },
    });
    expect(ownerInvite.status).toBe(201);
    const replaced = await call('POST', '/team/invitations', {
      cookie: admin.cookie,
      body: { email: 'partner@example.com', role: 'member' },
    });
    expect(replaced.status).toBe(403);
    const ownerToken = ownerInvite.body.invite_url.split('/').at(-1);
    expect((await call('GET', `/invitations/${ownerToken}`)).body.role).toBe('owner');

    // An owner may re-invite the waiting owner as an admin: another owner remains.
    const demoted = await call('POST', '/team/invitations', {
      cookie: owner.cookie,
      body: { email: 'founder@example.com', role: 'admin' },
    });
    expect(demoted.status).toBe(201);
    const accepted = await call('POST', `/invitations/${demoted.body.invite_url.split('/').at(-1)}/accept`, {
      body: { name: 'Founder', password: 'a long enough password' },
    });
    expect(accepted.status).toBe(200);
    expect(accepted.body.user).toMatchObject({ id: waiting.id, role: 'admin' });
  });

  it("revokes an inviter's open invitations when they are removed, and those they may no longer give when demoted", async () => {
    const { owner, admin, workspace } = await team(api.current.db, call, 'Inviters');
    const invite = async (cookie: string, email: string, role: string) => {
      const invited = await call('POST', '/team/invitations', { cookie, body: { email, role } });
      expect(invited.status).toBe(201);
      return invited.body.invite_url.split('/').at(-1) as string;
    };
    const isOpen = async (token: string) => (await call('GET', `/invitations/${token}`)).status === 200;

    // An owner who becomes an admin keeps the invitations an admin may give, not the owner-level one.
    const other = await makeUser(api.current.db, workspace.id, 'owner', 'second-owner@example.com');
    const otherCookie = await signIn(call, other.email);
    const asOwner = await invite(otherCookie, 'future-owner@example.com', 'owner');
    const asAdmin = await invite(otherCookie, 'future-admin@example.com', 'admin');
    expect(
      (await call('PATCH', `/team/members/${other.id}`, { cookie: owner.cookie, body: { role: 'admin' } })).status,
    ).toBe(200);
    expect(await isOpen(asOwner)).toBe(false);
    expect(await isOpen(asAdmin)).toBe(true);

    // An admin removed: every invitation they sent goes; another admin's stays.
    const accomplice = await invite(admin.cookie, 'accomplice@example.com', 'admin');
    const colleague = await invite(owner.cookie, 'colleague@example.com', 'member');
    expect((await call('DELETE', `/team/members/${admin.id}`, { cookie: owner.cookie })).status).toBe(204);
    expect(await isOpen(accomplice)).toBe(false);
    expect(await isOpen(colleague)).toBe(true);
    const accepted = await call('POST', `/invitations/${accomplice}/accept`, {
      body: { name: 'Accomplice', password: 'a long enough password' },
    });
    expect(accepted.status).toBe(404);

    const log = await call('GET', '/security-log', { cookie: owner.cookie });
    const revoked = log.body.data.filter((entry: { action: string }) => entry.action === 'team.invitation_revoked');
    expect(revoked.map((entry: { target: { label: string } }) => entry.target.label).sort()).toEqual([
      'accomplice@example.com',
      'future-owner@example.com',
    ]);
    expect(
      (await call('GET', '/team', { cookie: owner.cookie })).body.invitations
        .map((i: { email: string }) => i.email)
        .sort(),
    ).toEqual(['colleague@example.com', 'future-admin@example.com']);
  });

  it('accepting an invitation never leaves the workspace without an owner', async () => {
    const workspace = await createWorkspace(api.current.db, { name: 'LastOwner' });
    await api.current
      .db('users')
      .insert({ workspace_id: workspace.id, email: 'only@example.com', role: 'owner', name: null });
    // The operator CLI (no acting role) invites the only owner as a member.
    const { token } = await inviteMember(
      api.current.db,
      { workspace_id: workspace.id, email: 'only@example.com', role: 'member', inviter_role: null, base_url: ORIGIN },
      OPERATOR,
    );
    const accept = await call('POST', `/invitations/${token}/accept`, {
      body: { name: 'Only', password: 'a long enough password' },
    });
    expect(accept.status).toBe(409);
    expect(accept.body.error.message).toMatch(/at least one owner/);
    const [user] = await api.current.db('users').where({ workspace_id: workspace.id });
    expect(user).toMatchObject({ role: 'owner', password_hash: null });
  });

  it('an email holds a password in one workspace only', async () => {
    const { owner } = await team(api.current.db, call, 'One');
    const other = await createWorkspace(api.current.db, { name: 'Two' });
    await makeUser(api.current.db, other.id, 'owner', 'shared@example.com');
    const invited = await call('POST', '/team/invitations', {
      cookie: owner.cookie,
      body: { email: 'shared@example.com', role: 'member' },
    });
    const token = invited.body.invite_url.split('/').at(-1);
    const accept = await call('POST', `/invitations/${token}/accept`, {
      body: { name: 'S', password: 'a long enough password' },
    });
    expect(accept.status).toBe(409);
    // Whoever accepts may be the inviter (a link shown to copy): not told in words where the address is.
    expect(accept.body.error).toEqual({
      type: 'conflict',
      message: 'This email address cannot accept this invitation; ask whoever runs this service.',
    });
  });
});
