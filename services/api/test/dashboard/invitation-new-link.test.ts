import { describe, expect, it } from '@jest/globals';
import { createUser, EXPIRED_INVITATION_LISTED_MS, INVITATION_LIFETIME_MS } from '@retention/domain';
import { useApi } from '../harness.js';
import { dashboardClient, makeUser, PASSWORD, signIn, team } from './support.js';

/**
 * A pending invitation's New link (without SMTP_URL; Resend with it, in email.test.ts):
 * `POST /team/invitations/:id/new-link` gives the invitation a new one-time link for a fresh 7
 * days, ends the old one, and is allowed to whoever may send that invitation now
 * (docs/dashboard-api.md, "Team"). Over real HTTP against the API app, PostgreSQL and Redis.
 */
const api = useApi();
const call = (...args: Parameters<ReturnType<typeof dashboardClient>>) => dashboardClient(api.current.url)(...args);

const tokenOf = (inviteUrl: string) => inviteUrl.split('/').at(-1)!;
const accept = (token: string, name = 'Newcomer') =>
  call('POST', `/invitations/${token}/accept`, { body: { name, password: 'a long enough password' } });

async function invite(cookie: string, email: string, role: string) {
  const invited = await call('POST', '/team/invitations', { cookie, body: { email, role } });
  expect(invited.status).toBe(201);
  return { id: invited.body.invitation.id as string, token: tokenOf(invited.body.invite_url) };
}

const newLink = (cookie: string, id: string) => call('POST', `/team/invitations/${id}/new-link`, { cookie });

/** Makes the invitation's link end `ms` ago. */
const expireAgo = (id: string, ms: number) =>
  api.current
    .db('account_links')
    .where({ id })
    .update({ expires_at: new Date(Date.now() - ms) });

/** The invitations GET /team lists, pending or expired. */
async function listedInvitations(cookie: string) {
  const listed = await call('GET', '/team', { cookie });
  expect(listed.status).toBe(200);
  return listed.body.invitations as Array<Record<string, any>>;
}

describe('a pending invitation’s new link', () => {
  it('ends the old link (read as a revoked one is), gives a new one for a fresh 7 days, and logs it', async () => {
    const { owner, admin, workspace } = await team(api.current.db, call, 'New link');
    const sent = await invite(owner.cookie, 'Late.Reader@example.com', 'member');
    // Six days on: one day of the first link left.
    await api.current
      .db('account_links')
      .where({ id: sent.id })
      .update({ expires_at: new Date(Date.now() + 24 * 3_600_000) });
    const cancelled = await invite(owner.cookie, 'cancelled@example.com', 'member');
    expect((await call('DELETE', `/team/invitations/${cancelled.id}`, { cookie: owner.cookie })).status).toBe(204);

    const before = Date.now();
    const renewed = await newLink(admin.cookie, sent.id);
    expect(renewed.status).toBe(200);
    expect(renewed.body).toEqual({
      invitation: {
        id: sent.id,
        object: 'invitation',
        email: 'Late.Reader@example.com',
        role: 'member',
        invited_by: { id: admin.id, email: admin.email, name: 'admin person' },
        created_at: expect.any(String),
        expires_at: expect.any(String),
      },
      emailed: false,
      invite_url: expect.stringMatching(/^http:\/\/localhost:3000\/dashboard\/invite\/[A-Za-z0-9_-]{43}$/),
    });
    const expiresAt = Date.parse(renewed.body.invitation.expires_at);
    expect(expiresAt).toBeGreaterThanOrEqual(before + INVITATION_LIFETIME_MS - 1_000);
    expect(expiresAt).toBeLessThanOrEqual(Date.now() + INVITATION_LIFETIME_MS + 1_000);
    const token = tokenOf(renewed.body.invite_url);
    expect(token).not.toBe(sent.token);

    // The old link reads exactly as a cancelled invitation's does, to look at and to accept.
    const old = await call('GET', `/invitations/${sent.token}`);
    const revoked = await call('GET', `/invitations/${cancelled.token}`);
    expect([old.status, old.body]).toEqual([revoked.status, revoked.body]);
    expect(old.status).toBe(404);
    const oldAccepted = await accept(sent.token);
    const revokedAccepted = await accept(cancelled.token);
    expect([oldAccepted.status, oldAccepted.body]).toEqual([revokedAccepted.status, revokedAccepted.body]);

    // One invitation still, the same one, with the new expiry and its new link's maker.
    const listed = await listedInvitations(owner.cookie);
    expect(listed).toEqual([
      expect.objectContaining({ id: sent.id, expires_at: renewed.body.invitation.expires_at, can_make_new_link: true }),
    ]);
    expect(listed[0]!.invited_by.id).toBe(admin.id);
    // Only the new token's hash is stored.
    const links = await api.current.db('account_links').where({ workspace_id: workspace.id }).select('token_hash');
    expect(JSON.stringify(links)).not.toContain(token);

    const shown = await call('GET', `/invitations/${token}`);
    expect(shown.body).toMatchObject({ email: 'Late.Reader@example.com', role: 'member', workspace_name: 'New link' });
    const accepted = await accept(token);
    expect(accepted.status).toBe(200);
    expect(accepted.body.user).toMatchObject({ email: 'Late.Reader@example.com', role: 'member' });
    expect((await accept(token)).status).toBe(404);

    const log = await call('GET', '/security-log', { cookie: owner.cookie });
    const entries = (log.body.data as Array<Record<string, any>>).filter((entry) =>
      String(entry.target?.label).startsWith('Late.Reader'),
    );
    expect(entries.map((entry) => [entry.action, entry.actor.user_id, entry.target?.id, entry.details])).toEqual([
      ['team.joined', accepted.body.user.id, accepted.body.user.id, { role: 'member', invitation_id: sent.id }],
      ['team.invitation_link_renewed', admin.id, sent.id, { role: 'member' }],
      ['team.invited', owner.id, sent.id, { role: 'member' }],
    ]);
  });

  it('lists an invitation expired in the last 30 days as expired, never accepted; a new link makes it pending', async () => {
    const { owner } = await team(api.current.db, call, 'Expired');
    const sent = await invite(owner.cookie, 'slow@example.com', 'admin');
    await expireAgo(sent.id, 1);
    // Listed, marked expired, with what a pending one offers.
    expect(await listedInvitations(owner.cookie)).toEqual([
      expect.objectContaining({ id: sent.id, email: 'slow@example.com', status: 'expired', can_make_new_link: true }),
    ]);
    // Its link no longer works, listed or not: to look at and to accept.
    expect((await call('GET', `/invitations/${sent.token}`)).status).toBe(404);
    const late = await accept(sent.token);
    expect([late.status, late.body.error.message]).toEqual([
      404,
      'This link is not valid: it may have expired or been used already.',
    ]);
    expect(await api.current.db('users').where({ email: 'slow@example.com' }).first()).toBeUndefined();

    const renewed = await newLink(owner.cookie, sent.id);
    expect(renewed.status).toBe(200);
    expect(await listedInvitations(owner.cookie)).toEqual([
      expect.objectContaining({ id: sent.id, status: 'pending', expires_at: renewed.body.invitation.expires_at }),
    ]);
    expect((await accept(sent.token)).status).toBe(404);
    expect((await accept(tokenOf(renewed.body.invite_url))).status).toBe(200);
  });

  it('lists the pending invitations first, then those expired less than 30 days ago, and no others', async () => {
    const { owner } = await team(api.current.db, call, 'Listed');
    const days = (n: number) => n * 24 * 3_600_000;
    // Sent first, and still pending: listed before the two expired ones sent after it.
    await invite(owner.cookie, 'waiting@example.com', 'member');
    const older = await invite(owner.cookie, 'older@example.com', 'member');
    const lately = await invite(owner.cookie, 'lately@example.com', 'member');
    const longAgo = await invite(owner.cookie, 'long.ago@example.com', 'member');
    const cancelled = await invite(owner.cookie, 'cancelled@example.com', 'member');
    const accepted = await invite(owner.cookie, 'joined.early@example.com', 'member');
    await expireAgo(older.id, days(29));
    await expireAgo(lately.id, days(1));
    await expireAgo(longAgo.id, EXPIRED_INVITATION_LISTED_MS + 60_000);
    // Expired, then cancelled (Cancel invitation works on an expired one); accepted before it expired.
    await expireAgo(cancelled.id, days(2));
    expect((await call('DELETE', `/team/invitations/${cancelled.id}`, { cookie: owner.cookie })).status).toBe(204);
    expect((await accept(accepted.token)).status).toBe(200);
    await expireAgo(accepted.id, days(2));

    expect((await listedInvitations(owner.cookie)).map((invitation) => [invitation.email, invitation.status])).toEqual([
      ['waiting@example.com', 'pending'],
      ['lately@example.com', 'expired'],
      ['older@example.com', 'expired'],
    ]);
    // Gone from the list is not gone for good: inviting the address again replaces it, as any.
    const again = await call('POST', '/team/invitations', {
      cookie: owner.cookie,
      body: { email: 'long.ago@example.com', role: 'member' },
    });
    expect(again.status).toBe(201);
    expect(await api.current.db('account_links').where({ id: longAgo.id }).first()).toMatchObject({
      revoked_at: expect.any(Date),
    });
  });

  it('is allowed to whoever may send that invitation, and GET /team says where', async () => {
    const { owner, admin, member, workspace } = await team(api.current.db, call, 'Who may');
    const forOwner = await invite(owner.cookie, 'partner@example.com', 'owner');
    const forMember = await invite(admin.cookie, 'helper@example.com', 'member');
    // An account the operator made without a password, which has been an owner: accepting an
    // invitation to its address hands it over, so only an owner may send one, or renew it.
    const founder = await createUser(api.current.db, {
      workspace_id: workspace.id,
      email: 'founder@example.com',
      role: 'owner',
    });
    await api.current.db('users').where({ id: founder.id }).update({ role: 'admin' });
    const forFounder = await invite(owner.cookie, 'FOUNDER@example.com', 'admin');

    const refusals = [
      [member.cookie, forMember.id, 403, 'Only owners and admins can manage the team.'],
      [admin.cookie, forOwner.id, 403, 'Only owners can give the owner role, or change or remove an owner.'],
      [
        admin.cookie,
        forFounder.id,
        403,
        'founder@example.com has been an owner of this workspace: only owners can invite that address.',
      ],
    ] as const;
    const logSize = async () =>
      Number((await api.current.db('security_events').where({ workspace_id: workspace.id }).count('* as n'))[0]!.n);
    const before = await logSize();
    for (const [cookie, id, status, message] of refusals) {
      const refused = await newLink(cookie, id);
      expect([refused.status, refused.body]).toEqual([status, { error: { type: 'forbidden', message } }]);
    }
    expect(await logSize()).toBe(before);
    // Every first link still works: a refusal changes nothing.
    for (const { token } of [forOwner, forMember, forFounder]) {
      expect((await call('GET', `/invitations/${token}`)).status).toBe(200);
    }

    const offered = async (cookie: string) =>
      Object.fromEntries(
        (await listedInvitations(cookie)).map((invitation) => [invitation.email, invitation.can_make_new_link]),
      );
    expect(await offered(admin.cookie)).toEqual({
      'FOUNDER@example.com': false,
      'helper@example.com': true,
      'partner@example.com': false,
    });
    expect(await offered(owner.cookie)).toEqual({
      'FOUNDER@example.com': true,
      'helper@example.com': true,
      'partner@example.com': true,
    });
    expect(Object.values(await offered(member.cookie))).toEqual([false, false, false]);
    expect((await call('GET', '/team', { cookie: member.cookie })).body.emails).toBe(false);

    for (const { id } of [forOwner, forFounder, forMember]) expect((await newLink(owner.cookie, id)).status).toBe(200);
    expect((await newLink(admin.cookie, forMember.id)).status).toBe(200);

    // An address that has signed in here since (a reset link the operator made, say): it is a
    // member, as inviting it says, and the invitation is not renewed.
    await api.current.db('users').where({ id: founder.id }).update({ password_hash: 'x' });
    const joined = await newLink(owner.cookie, forFounder.id);
    expect([joined.status, joined.body.error]).toEqual([
      409,
      { type: 'conflict', message: 'founder@example.com is already a member of this workspace.' },
    ]);
  });

  it('answers 404 for an invitation accepted, cancelled or in another workspace, and 400 for an id that is none', async () => {
    const mine = await team(api.current.db, call, 'Mine');
    const theirs = await team(api.current.db, call, 'Theirs');
    const their = await invite(theirs.owner.cookie, 'theirs@example.com', 'member');
    const accepted = await invite(mine.owner.cookie, 'accepted@example.com', 'member');
    expect((await accept(accepted.token)).status).toBe(200);
    const cancelled = await invite(mine.owner.cookie, 'gone@example.com', 'member');
    await call('DELETE', `/team/invitations/${cancelled.id}`, { cookie: mine.owner.cookie });
    for (const id of [their.id, accepted.id, cancelled.id, '00000000-0000-4000-8000-000000000000']) {
      const refused = await newLink(mine.owner.cookie, id);
      expect([id, refused.status, refused.body]).toEqual([
        id,
        404,
        {
          error: { type: 'not_found', message: 'This invitation is no longer pending: it was accepted or canceled.' },
        },
      ]);
    }
    // Theirs is untouched.
    expect((await call('GET', `/invitations/${their.token}`)).status).toBe(200);
    const malformed = await newLink(mine.owner.cookie, 'not-an-id');
    expect([malformed.status, malformed.body.error]).toEqual([
      400,
      { type: 'invalid_param', message: 'id: must be a UUID', param: 'id' },
    ]);
  });

  it('makes the new link its maker’s: removed, it is revoked with theirs; accepted, their role is what is checked', async () => {
    const { owner, admin, workspace } = await team(api.current.db, call, 'Whose link');
    // The owner's invitation, renewed by an admin, then the admin removed: the link they could
    // have copied goes with them, as every link they made does.
    const sent = await invite(owner.cookie, 'friend@example.com', 'member');
    const renewed = await newLink(admin.cookie, sent.id);
    expect((await call('DELETE', `/team/members/${admin.id}`, { cookie: owner.cookie })).status).toBe(204);
    expect((await call('GET', `/invitations/${tokenOf(renewed.body.invite_url)}`)).status).toBe(404);
    const log = await call('GET', '/security-log', { cookie: owner.cookie });
    expect(
      (log.body.data as Array<Record<string, any>>).find((entry) => entry.action === 'team.invitation_revoked'),
    ).toMatchObject({ target: { id: sent.id }, details: { reason: 'inviter_removed', invited_by: admin.email } });

    // An account the operator made as a member, invited by the owner as an admin and renewed by
    // another admin; made an owner before it is accepted: the admin who holds the new link may
    // not give it away (the owner who sent the first one could have).
    const colleague = await makeUser(api.current.db, workspace.id, 'admin');
    const colleagueCookie = await signIn(call, colleague.email, PASSWORD);
    const account = await createUser(api.current.db, {
      workspace_id: workspace.id,
      email: 'waiting@example.com',
      role: 'member',
    });
    const toAccount = await invite(owner.cookie, 'waiting@example.com', 'admin');
    const held = await newLink(colleagueCookie, toAccount.id);
    expect(held.status).toBe(200);
    await api.current.db('users').where({ id: account.id }).update({ role: 'owner' });
    const taken = await accept(tokenOf(held.body.invite_url), 'Taken');
    expect([taken.status, taken.body.error]).toEqual([
      409,
      {
        type: 'conflict',
        message: 'This invitation can no longer be accepted: ask an owner of the workspace for a new one.',
      },
    ]);
    expect(await api.current.db('users').where({ id: account.id }).first()).toMatchObject({
      role: 'owner',
      password_hash: null,
    });

    // Another such account, left a member: accepted, and the role change is recorded in the new
    // link's maker's name, not the first inviter's.
    const other = await createUser(api.current.db, {
      workspace_id: workspace.id,
      email: 'other@example.com',
      role: 'member',
    });
    const toOther = await invite(owner.cookie, 'other@example.com', 'admin');
    const otherLink = await newLink(colleagueCookie, toOther.id);
    const joined = await accept(tokenOf(otherLink.body.invite_url), 'Joined');
    expect(joined.status).toBe(200);
    const changes = (await call('GET', '/security-log', { cookie: owner.cookie })).body.data.filter(
      (entry: Record<string, any>) => entry.action === 'team.role_changed' && entry.target.id === other.id,
    );
    expect(changes.map((entry: Record<string, any>) => [entry.actor.user_id, entry.details])).toEqual([
      [colleague.id, { from: 'member', to: 'admin' }],
    ]);
  });
});
