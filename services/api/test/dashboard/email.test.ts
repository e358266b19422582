import { randomBytes } from 'node:crypto';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import express from 'express';
import { loadConfig } from '@retention/core';
import { createLogger, createMailer, createRedis, type Redis } from '@retention/runtime';
import { eventually, redisKeyPrefix, runId, TEST_REDIS_URL, testSecretsKey, useTestDatabase } from '@retention/testkit';
import { startSmtpStandIn, type ReceivedMail, type SmtpStandIn } from '@retention/testkit/smtp';
import { errorHandler } from '../../src/middleware/errors.js';
import { dashboardApi, DASHBOARD_API_PREFIX } from '../../src/dashboard/router.js';
import { dashboardClient, deviceCookieOf, makeUser, PASSWORD, signIn, team } from './support.js';

/** Invitations and resets emailed through a real SMTP conversation with smtp-server, in-process. */

const SMTP_USER = 'mailer';
const SMTP_PASSWORD = 'smtp-pass-do-not-log';
const database = useTestDatabase();
const logLines: string[] = [];
let smtp: SmtpStandIn;
const servers: Server[] = [];
let redis: Redis;

async function startDashboard(smtpUrl: string): Promise<ReturnType<typeof dashboardClient>> {
  const config = loadConfig({
    SECRETS_KEY: testSecretsKey(),
    DATABASE_URL: database.current.url,
    REDIS_URL: TEST_REDIS_URL,
    REDIS_KEY_PREFIX: `${redisKeyPrefix(runId())}-${randomBytes(4).toString('hex')}`,
    SMTP_URL: smtpUrl,
  });
  const sink = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      logLines.push(chunk.toString('utf8'));
      callback();
    },
  });
  const logger = createLogger('api', 'trace', sink);
  const app = express();
  app.use(
    DASHBOARD_API_PREFIX,
    dashboardApi({ config, db: database.current.db, redis, logger, mailer: createMailer(config, logger) }),
  );
  app.use(errorHandler(logger));
  const server = app.listen(0, '127.0.0.1');
  servers.push(server);
  await new Promise((resolve) => server.once('listening', resolve));
  return dashboardClient(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
}

beforeAll(async () => {
  redis = createRedis(TEST_REDIS_URL, 'command', 'dashboard-email-test');
  smtp = await startSmtpStandIn({ credentials: { user: SMTP_USER, password: SMTP_PASSWORD } });
});

afterAll(async () => {
  for (const server of servers) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
  await smtp.close();
  redis.disconnect();
});

describe('email over SMTP', () => {
  it('emails an invitation and a password reset whose links work; says nothing for an unknown address', async () => {
    const call = await startDashboard(smtp.url);
    const { owner, admin, member, workspace } = await team(database.current.db, call, 'Mail <Co>');
    const invited = await call('POST', '/team/invitations', {
      cookie: owner.cookie,
      body: { email: 'Invitee@Example.com', role: 'member' },
    });
    expect(invited.status).toBe(201);
    expect(invited.body.emailed).toBe(true);
    // Emailed, so not handed to the inviter: only the invitee can accept it.
    expect(invited.body.invite_url).toBeUndefined();
    const invitation = smtp.received.find((mail) => mail.to.includes('invitee@example.com'))!;
    expect(invitation.from).toBe('no-reply@localhost');
    const inviteToken = /\/dashboard\/invite\/([A-Za-z0-9_-]{43})/.exec(invitation.text)![1]!;
    expect((await call('GET', `/invitations/${inviteToken}`)).body.email).toBe('Invitee@Example.com');
    expect(invitation.raw).toMatch(/Subject: You are invited to Mail <Co>/);

    const mailedReset = await call('POST', `/team/members/${member.id}/reset-link`, { cookie: owner.cookie });
    expect(mailedReset.status).toBe(200);
    expect(mailedReset.body).toEqual({ emailed: true, expires_at: expect.any(String) });
    await eventually(() => smtp.received.some((mail) => mail.to.includes(member.email)), 10_000);
    // Emailed, a link goes to its owner: an admin may have one sent to another admin.
    const me = await call('GET', '/me', { cookie: admin.cookie });
    expect(me.body.permissions.reset_link_roles).toEqual(['admin', 'member']);
    const colleague = await makeUser(database.current.db, workspace.id, 'admin');
    const colleagueReset = await call('POST', `/team/members/${colleague.id}/reset-link`, { cookie: admin.cookie });
    expect(colleagueReset.body).toEqual({ emailed: true, expires_at: expect.any(String) });
    // Moved down to member, they were an admin: emailed, that keeps nothing from the admin.
    await database.current.db('users').where({ id: colleague.id }).update({ role: 'member' });
    // So the Team page offers it for them, and not for the owner, whose role the admin cannot give;
    // and names no former role that would keep it (reset_link_former_role), email being sent.
    const listed = (await call('GET', '/team', { cookie: admin.cookie })).body.members as Array<{
      id: string;
      can_make_reset_link: boolean;
      reset_link_former_role: string | null;
    }>;
    expect(listed.find((person) => person.id === colleague.id)).toMatchObject({
      can_make_reset_link: true,
      reset_link_former_role: null,
    });
    expect(listed.find((person) => person.id === owner.id)?.can_make_reset_link).toBe(false);

    const before = smtp.received.length;
    // The same answer for an unknown address and a member's: email is sent by this service.
    for (const email of ['nobody@example.com', member.email]) {
      const asked = await call('POST', '/password-reset', { body: { email } });
      expect(asked.status).toBe(202);
      expect(asked.body).toEqual({ accepted: true, emailed: true });
    }
    expect((await call('GET', '/password-reset')).body).toEqual({ object: 'password_reset_options', emails: true });
    await eventually(() => smtp.received.length > before, 10_000);
    expect(smtp.received.slice(before).map((mail) => mail.to)).toEqual([[member.email]]);
    const link = /\/dashboard\/reset\/([A-Za-z0-9_-]{43})/.exec(smtp.received.at(-1)!.text)![1]!;
    expect((await call('POST', `/password-reset/${link}`, { body: { password: 'emailed new password' } })).status).toBe(
      200,
    );
    await signIn(call, member.email, 'emailed new password');
    expect((await call('POST', '/session', { body: { email: member.email, password: PASSWORD } })).status).toBe(401);
  });

  it('emails at most three resets an hour to one account, answering 202 alike, and the last link stays good', async () => {
    const call = await startDashboard(smtp.url);
    const { owner, member } = await team(database.current.db, call, 'Flood');
    const before = smtp.received.length;
    const toMember = () => smtp.received.slice(before).filter((mail) => mail.to.includes(member.email));
    for (let i = 0; i < 5; i += 1) {
      expect((await call('POST', '/password-reset', { body: { email: member.email.toUpperCase() } })).status).toBe(202);
    }
    // Asked after the five: decided after them, so once its email is in, theirs are decided too.
    expect((await call('POST', '/password-reset', { body: { email: owner.email } })).status).toBe(202);
    await eventually(() => smtp.received.slice(before).some((mail) => mail.to.includes(owner.email)), 10_000);
    await eventually(() => toMember().length >= 3, 10_000);
    expect(toMember()).toHaveLength(3);
    const links = await database.current
      .db('account_links')
      .where({ kind: 'password_reset', email: member.email })
      .whereNull('revoked_at');
    expect(links).toHaveLength(1);
    const last = /\/dashboard\/reset\/([A-Za-z0-9_-]{43})/.exec(toMember().at(-1)!.text)![1]!;
    expect((await call('GET', `/password-reset/${last}`)).status).toBe(200);
  });

  it('counts a non-ASCII spelling that PostgreSQL lowers to the account (İ) against nothing: it is sent nothing', async () => {
    const call = await startDashboard(smtp.url);
    const { owner, workspace } = await team(database.current.db, call, 'Spellings');
    const email = `member-${randomBytes(4).toString('hex')}@northwind.example`;
    await makeUser(database.current.db, workspace.id, 'member', email);
    const before = smtp.received.length;
    const mailsTo = (to: string) => smtp.received.slice(before).filter((mail) => mail.to.includes(to)).length;
    for (let i = 0; i < 4; i += 1)
      expect((await call('POST', '/password-reset', { body: { email } })).status).toBe(202);
    // A spelling that had limits of its own: 3 more emails an hour each, before.
    for (let i = 0; i < 4; i += 1) {
      const asked = await call('POST', '/password-reset', { body: { email: email.replace('northwind', 'northwİnd') } });
      expect(asked.status).toBe(202);
      expect(asked.body).toEqual({ accepted: true, emailed: true });
    }
    // Asked after all of them, so decided after them: once its email is in, theirs are too.
    expect((await call('POST', '/password-reset', { body: { email: owner.email } })).status).toBe(202);
    await eventually(() => mailsTo(owner.email) === 1 && mailsTo(email) >= 3, 10_000);
    // Each email is a new link (revoking the one before): the links made count them all,
    // whatever order the SMTP conversations ended in.
    const links = await database.current.db('account_links').where({ kind: 'password_reset', email });
    expect(links).toHaveLength(3);
    expect(mailsTo(email)).toBe(3);
  });

  it("emails a reset asked from the account's trusted device though a stranger used up the account's three", async () => {
    const call = await startDashboard(smtp.url);
    const { owner, member } = await team(database.current.db, call, 'Locked out');
    const deviceOf = async (email: string) =>
      deviceCookieOf(await call('POST', '/session', { body: { email, password: PASSWORD } }));
    const membersDevice = await deviceOf(member.email);
    const ownersDevice = await deviceOf(owner.email);
    const before = smtp.received.length;
    const mailsTo = (email: string) => smtp.received.slice(before).filter((mail) => mail.to.includes(email)).length;
    const ask = async (email: string, cookie?: string) =>
      expect((await call('POST', '/password-reset', { body: { email }, cookie })).status).toBe(202);

    // A stranger uses up the account's three.
    for (let i = 0; i < 4; i += 1) await ask(member.email);
    await eventually(() => mailsTo(member.email) >= 3, 10_000);
    // Another account's device is no device of this one: still nothing.
    await ask(member.email, ownersDevice);
    // The member's own browser gets links: three an hour of its own.
    for (let i = 0; i < 4; i += 1) await ask(member.email, membersDevice);
    await eventually(() => mailsTo(member.email) >= 6, 10_000);
    // Asked after all of them, so decided after them: once its email is in, theirs are too.
    await ask(owner.email);
    await eventually(() => mailsTo(owner.email) === 1, 10_000);
    expect(mailsTo(member.email)).toBe(6);
  });

  it('emails at most ten resets an hour to one account, however many of its trusted devices ask', async () => {
    const call = await startDashboard(smtp.url);
    const { owner, member } = await team(database.current.db, call, 'Many devices');
    // Four browsers, each signed in (without a cookie: a new device each), each with 3 of its own.
    const devices: string[] = [];
    for (let i = 0; i < 4; i += 1)
      devices.push(
        deviceCookieOf(await call('POST', '/session', { body: { email: member.email, password: PASSWORD } })),
      );
    const before = smtp.received.length;
    const mailsTo = (email: string) => smtp.received.slice(before).filter((mail) => mail.to.includes(email)).length;
    for (const cookie of devices)
      for (let i = 0; i < 3; i += 1)
        expect((await call('POST', '/password-reset', { body: { email: member.email }, cookie })).status).toBe(202);
    // Asked after all of them, so decided after them.
    expect((await call('POST', '/password-reset', { body: { email: owner.email } })).status).toBe(202);
    await eventually(() => mailsTo(owner.email) === 1 && mailsTo(member.email) >= 10, 10_000);
    // Each email is a new link: the links made count them all, whatever order SMTP ended in.
    const links = await database.current.db('account_links').where({ kind: 'password_reset', email: member.email });
    expect(links).toHaveLength(10);
  });

  it('limits the Team page to 5 emails an hour to one address and 50 from a workspace, with Retry-After', async () => {
    const call = await startDashboard(smtp.url);
    const { owner, admin, member } = await team(database.current.db, call, 'Mail flood');
    const before = smtp.received.length;
    const mailsTo = (email: string) => smtp.received.slice(before).filter((mail) => mail.to.includes(email)).length;
    const invite = (email: string) =>
      call('POST', '/team/invitations', { cookie: owner.cookie, body: { email, role: 'member' } });
    const resetLink = (id: string) => call('POST', `/team/members/${id}/reset-link`, { cookie: admin.cookie });
    const expectRefused = (refused: Awaited<ReturnType<typeof call>>, message: RegExp) => {
      expect(refused.status).toBe(429);
      expect(refused.body.error).toEqual({ type: 'rate_limit_exceeded', message: expect.stringMatching(message) });
      const retryAfter = Number(refused.headers.get('retry-after'));
      expect(retryAfter).toBeGreaterThan(0);
      expect(retryAfter).toBeLessThanOrEqual(3600);
    };

    // One address: invitations and reset links alike, whoever sends them, in any spelling.
    for (let i = 0; i < 5; i += 1) expect((await resetLink(member.id)).status).toBe(200);
    expectRefused(await resetLink(member.id), /to this address: at most 5 an hour/);
    for (let i = 0; i < 5; i += 1) expect((await invite('twice@example.com')).status).toBe(201);
    expectRefused(await invite('TWICE@example.com'), /to this address: at most 5 an hour/);
    await eventually(() => mailsTo(member.email) === 5 && mailsTo('twice@example.com') === 5, 10_000);

    // The workspace: 50 in all, the 10 above counted.
    for (let i = 0; i < 40; i += 1) expect((await invite(`guest-${i}@example.com`)).status).toBe(201);
    expectRefused(await invite('one-too-many@example.com'), /from this workspace: at most 50 an hour/);
    expectRefused(await resetLink(admin.id), /from this workspace: at most 50 an hour/);
    // Refused before anything was made or sent.
    const open = await database.current.db('account_links').where({ email: 'one-too-many@example.com' });
    expect(open).toEqual([]);
    expect(mailsTo('one-too-many@example.com') + mailsTo(admin.email)).toBe(0);

    // Another workspace's windows are its own.
    const other = await team(database.current.db, call, 'Quiet mail');
    const elsewhere = await call('POST', '/team/invitations', {
      cookie: other.owner.cookie,
      body: { email: 'twice@example.com', role: 'member' },
    });
    expect(elsewhere.status).toBe(201);
  });

  it("counts on the Team page only what it makes: refused invitations (400, 403, 409) use up no address's or workspace's emails", async () => {
    const call = await startDashboard(smtp.url);
    const { admin, member } = await team(database.current.db, call, 'Mistakes');
    const invite = (email: string, role: string) =>
      call('POST', '/team/invitations', { cookie: admin.cookie, body: { email, role } });
    const mistakes = [
      ...Array.from({ length: 30 }, () => ['later@example.com', 'owner', 403] as const),
      ...Array.from({ length: 15 }, () => ['later@example.com', 'boss', 400] as const),
      ...Array.from({ length: 15 }, () => [member.email, 'member', 409] as const),
    ];
    for (const [email, role, status] of mistakes) {
      expect([email, role, (await invite(email, role)).status]).toEqual([email, role, status]);
    }
    // The address's five and the workspace's fifty are all still there.
    for (let i = 0; i < 5; i += 1) expect((await invite('later@example.com', 'member')).status).toBe(201);
    expect((await invite('later@example.com', 'member')).status).toBe(429);
    for (let i = 0; i < 5; i += 1) {
      expect((await call('POST', `/team/members/${member.id}/reset-link`, { cookie: admin.cookie })).status).toBe(200);
    }
    for (let i = 0; i < 40; i += 1) expect((await invite(`fine-${i}@example.com`, 'member')).status).toBe(201);
    expect((await invite('fifty-first@example.com', 'member')).status).toBe(429);
  });

  it('Resend emails a pending invitation a new link, to its address only; the emailed link before stops working', async () => {
    const call = await startDashboard(smtp.url);
    const { owner, admin } = await team(database.current.db, call, 'Resent');
    const before = smtp.received.length;
    const mailsTo = (email: string) => smtp.received.slice(before).filter((mail) => mail.to.includes(email));
    const linkIn = (mail: ReceivedMail) => /\/dashboard\/invite\/([A-Za-z0-9_-]{43})/.exec(mail.text)![1]!;
    const invited = await call('POST', '/team/invitations', {
      cookie: owner.cookie,
      body: { email: 'resent@example.com', role: 'member' },
    });
    const first = linkIn(mailsTo('resent@example.com')[0]!);
    expect((await call('GET', '/team', { cookie: admin.cookie })).body.emails).toBe(true);

    const resent = await call('POST', `/team/invitations/${invited.body.invitation.id}/new-link`, {
      cookie: admin.cookie,
    });
    expect(resent.status).toBe(200);
    // Emailed, so not handed to whoever asked: only the invitee can accept it.
    expect(resent.body).toEqual({
      invitation: expect.objectContaining({ id: invited.body.invitation.id, email: 'resent@example.com' }),
      emailed: true,
    });
    const mails = mailsTo('resent@example.com');
    expect(mails).toHaveLength(2);
    expect(mails[1]!.raw).toMatch(/Subject: You are invited to Resent/);
    const second = linkIn(mails[1]!);
    expect(second).not.toBe(first);
    expect((await call('GET', `/invitations/${first}`)).status).toBe(404);
    const accepted = await call('POST', `/invitations/${second}/accept`, {
      body: { name: 'Resent', password: 'a long enough password' },
    });
    expect(accepted.status).toBe(200);
    expect(smtp.received.slice(before).map((mail) => mail.to)).toEqual([
      ['resent@example.com'],
      ['resent@example.com'],
    ]);
  });

  it('counts Resend against the Team page’s limits: 5 emails an hour to one address, refusals not counted', async () => {
    const call = await startDashboard(smtp.url);
    const { owner, admin, workspace } = await team(database.current.db, call, 'Resend flood');
    const before = smtp.received.length;
    const mailsTo = (email: string) => smtp.received.slice(before).filter((mail) => mail.to.includes(email));
    const invited = await call('POST', '/team/invitations', {
      cookie: owner.cookie,
      body: { email: 'flooded@example.com', role: 'owner' },
    });
    const resend = (cookie: string) =>
      call('POST', `/team/invitations/${invited.body.invitation.id}/new-link`, { cookie });
    // An admin may not renew an owner's invitation: refused, and nothing counted or sent.
    for (let i = 0; i < 10; i += 1) expect((await resend(admin.cookie)).status).toBe(403);
    // The invitation's email and four Resends make the address's five.
    for (let i = 0; i < 4; i += 1) expect((await resend(owner.cookie)).status).toBe(200);
    const refused = await resend(owner.cookie);
    expect(refused.status).toBe(429);
    expect(refused.body.error).toEqual({
      type: 'rate_limit_exceeded',
      message: 'Too many invitation and reset emails to this address: at most 5 an hour. Try again later.',
    });
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(mailsTo('flooded@example.com')).toHaveLength(5);
    // Refused before anything was made: the last link emailed still works, and the log has four.
    const last = /\/dashboard\/invite\/([A-Za-z0-9_-]{43})/.exec(mailsTo('flooded@example.com')[4]!.text)![1]!;
    expect((await call('GET', `/invitations/${last}`)).status).toBe(200);
    const renewals = await database.current
      .db('security_events')
      .where({ workspace_id: workspace.id, action: 'team.invitation_link_renewed' });
    expect(renewals).toHaveLength(4);
    // An invitation no longer pending is 404 and counts nothing either.
    const gone = await call('POST', '/team/invitations/00000000-0000-4000-8000-000000000000/new-link', {
      cookie: owner.cookie,
    });
    expect(gone.status).toBe(404);
  });

  it('an SMTP server that refuses still gives the link to copy, and the log holds no secret', async () => {
    const call = await startDashboard(`smtp://${SMTP_USER}:wrong-${SMTP_PASSWORD}@127.0.0.1:${smtp.port}`);
    const { owner, workspace } = await team(database.current.db, call, 'Refused');
    const invited = await call('POST', '/team/invitations', {
      cookie: owner.cookie,
      body: { email: 'x@example.com', role: 'admin' },
    });
    expect(invited.status).toBe(201);
    expect(invited.body.emailed).toBe(false);
    expect(invited.body.invite_url).toMatch(/\/dashboard\/invite\//);
    // Resend, likewise: the new link is shown to copy, the old one ended all the same.
    const resent = await call('POST', `/team/invitations/${invited.body.invitation.id}/new-link`, {
      cookie: owner.cookie,
    });
    expect(resent.body).toMatchObject({ emailed: false, invite_url: expect.stringMatching(/\/dashboard\/invite\//) });
    expect((await call('GET', `/invitations/${invited.body.invite_url.split('/').at(-1)}`)).status).toBe(404);
    const reset = await call('POST', `/team/members/${owner.id}/reset-link`, { cookie: owner.cookie });
    // One's own link is never shown to copy, failed email or not: it would skip the current password.
    expect(reset.status).toBe(200);
    expect(reset.body).toEqual({ emailed: false, expires_at: expect.any(String) });
    const admin = await makeUser(database.current.db, workspace.id, 'admin');
    const adminReset = await call('POST', `/team/members/${admin.id}/reset-link`, { cookie: owner.cookie });
    expect(adminReset.body).toMatchObject({ emailed: false, reset_url: expect.stringMatching(/\/dashboard\/reset\//) });
    // Another owner's link is not shown to copy when the email fails: it would be their account.
    const partner = await makeUser(database.current.db, workspace.id, 'owner');
    const partnerReset = await call('POST', `/team/members/${partner.id}/reset-link`, { cookie: owner.cookie });
    expect(partnerReset.status).toBe(200);
    expect(partnerReset.body).toEqual({ emailed: false, expires_at: expect.any(String) });
    const log = logLines.join('');
    expect(log).toContain('email not sent');
    const token = invited.body.invite_url.split('/').at(-1);
    const resentToken = resent.body.invite_url.split('/').at(-1);
    for (const secret of [SMTP_PASSWORD, token, resentToken, PASSWORD, owner.cookie.split('=')[1]])
      expect(log).not.toContain(secret);
  });
});
