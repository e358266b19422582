import { describe, expect, it } from '@jest/globals';
import { inTransaction } from '@retention/db';
import { createResetLink } from '@retention/domain';
import { useApi } from '../harness.js';
import { dashboardClient, makeUser, PASSWORD, signIn, team } from './support.js';

/**
 * A password-reset link made for someone on the Team page (shown to copy: no SMTP_URL here) is
 * only as good as its maker's standing, as an invitation is its inviter's; and a user's own open
 * links go when they change their password or sign out everywhere (docs/dashboard-api.md, Team).
 */
const api = useApi();
const call = (...args: Parameters<ReturnType<typeof dashboardClient>>) => dashboardClient(api.current.url)(...args);

async function resetLink(cookie: string, userId: string): Promise<string> {
  const made = await call('POST', `/team/members/${userId}/reset-link`, { cookie });
  expect(made.status).toBe(200);
  return made.body.reset_url.split('/').at(-1) as string;
}

const isOpen = async (token: string) => (await call('GET', `/password-reset/${token}`)).status === 200;

describe('open password-reset links', () => {
  it('go when their maker is removed: a removed admin cannot sign in as the member with one', async () => {
    const { owner, admin, member, workspace } = await team(api.current.db, call, 'Removed maker');
    const token = await resetLink(admin.cookie, member.id);
    // Another's link stays.
    const byOwner = await resetLink(owner.cookie, (await makeUser(api.current.db, workspace.id, 'member')).id);
    expect((await call('DELETE', `/team/members/${admin.id}`, { cookie: owner.cookie })).status).toBe(204);
    const used = await call('POST', `/password-reset/${token}`, { body: { password: 'the thief’s password' } });
    expect(used.status).toBe(404);
    await signIn(call, member.email, PASSWORD);
    expect(await isOpen(byOwner)).toBe(true);
    const log = await call('GET', '/security-log', { cookie: owner.cookie });
    const revoked = log.body.data.filter((entry: { action: string }) => entry.action === 'account.reset_link_revoked');
    expect(revoked).toHaveLength(1);
    expect(revoked[0]).toMatchObject({
      actor: { type: 'user', user_id: owner.id },
      target: { type: 'user', id: member.id, label: member.email },
      details: { reason: 'creator_removed', created_by: admin.email },
    });
  });

  it('go when their maker is demoted to a role that could not make them', async () => {
    const { owner, admin, member, workspace } = await team(api.current.db, call, 'Demoted maker');
    const partner = await makeUser(api.current.db, workspace.id, 'owner');
    const partnerCookie = await signIn(call, partner.email);
    const forAdmin = await resetLink(partnerCookie, admin.id);
    const forMember = await resetLink(partnerCookie, member.id);
    // One's own link is never shown to copy (it would skip the current password): made as the
    // operator CLI's user reset-link makes one, printed to whoever ran it.
    const forThemself = await inTransaction(api.current.db, (trx) =>
      createResetLink(trx, { ...partner, workspace_id: workspace.id }, api.current.url),
    ).then((link) => link.reset_url.split('/').at(-1) as string);
    const demote = (id: string, role: string) =>
      call('PATCH', `/team/members/${id}`, { cookie: owner.cookie, body: { role } });
    // An owner become admin may still make one for a member, not for an admin; the one for
    // their own account goes with the change of its role (below).
    expect((await demote(partner.id, 'admin')).status).toBe(200);
    expect([await isOpen(forAdmin), await isOpen(forMember), await isOpen(forThemself)]).toEqual([false, true, false]);
    // An admin become member may make none.
    const byAdmin = await resetLink(admin.cookie, member.id);
    expect((await demote(admin.id, 'member')).status).toBe(200);
    expect(await isOpen(byAdmin)).toBe(false);
    const log = await call('GET', '/security-log', { cookie: owner.cookie });
    const revoked = log.body.data.filter((entry: { action: string }) => entry.action === 'account.reset_link_revoked');
    expect(
      revoked.map((entry: { target: { id: string }; details: unknown }) => [entry.target.id, entry.details]),
    ).toEqual([
      [member.id, { reason: 'creator_role_changed', created_by: admin.email }],
      [admin.id, { reason: 'creator_role_changed', created_by: partner.email }],
    ]);
  });

  it("go when their account's role changes: an admin's link for a member opens no other admin's account", async () => {
    const { owner, admin, member } = await team(api.current.db, call, 'Promoted holder');
    const token = await resetLink(admin.cookie, member.id);
    const promoted = await call('PATCH', `/team/members/${member.id}`, {
      cookie: owner.cookie,
      body: { role: 'admin' },
    });
    expect(promoted.status).toBe(200);
    expect(await isOpen(token)).toBe(false);
    const used = await call('POST', `/password-reset/${token}`, { body: { password: 'the colleague’s password' } });
    expect(used.status).toBe(404);
  });

  it("go when their holder's account changes its password or signs out everywhere", async () => {
    const { owner, member } = await team(api.current.db, call, 'Own links');
    const beforeChange = await resetLink(owner.cookie, member.id);
    const changed = await call('POST', '/account/password', {
      cookie: member.cookie,
      body: { current_password: PASSWORD, new_password: 'a brand new password' },
    });
    expect(changed.status).toBe(204);
    expect(await isOpen(beforeChange)).toBe(false);

    const beforeSignOut = await resetLink(owner.cookie, member.id);
    const cookie = await signIn(call, member.email, 'a brand new password');
    expect((await call('POST', '/account/sign-out-everywhere', { cookie })).status).toBe(204);
    expect(await isOpen(beforeSignOut)).toBe(false);
    const used = await call('POST', `/password-reset/${beforeSignOut}`, { body: { password: 'someone else’s' } });
    expect(used.status).toBe(404);
  });

  it('are never shown to copy for someone who held a role at or above the maker’s: no admin moves a fellow admin down to sign in as them', async () => {
    const { owner, admin, workspace } = await team(api.current.db, call, 'Peer takeover');
    const fellow = await makeUser(api.current.db, workspace.id, 'admin');
    const setRole = (cookie: string, id: string, role: string) =>
      call('PATCH', `/team/members/${id}`, { cookie, body: { role } });
    const copy = (cookie: string, id: string) => call('POST', `/team/members/${id}/reset-link`, { cookie });

    expect((await copy(admin.cookie, fellow.id)).status).toBe(403);
    // Moved down to member, the fellow admin is still not someone this admin may copy a link for.
    expect((await setRole(admin.cookie, fellow.id, 'member')).status).toBe(200);
    const refused = await copy(admin.cookie, fellow.id);
    expect([refused.status, refused.body.error]).toEqual([
      403,
      {
        type: 'forbidden',
        message: `${fellow.email} was an admin here before. This service sends no email, so a reset link is shown to copy, and it is the account itself: only an owner may make one for them. Ask an owner, or have email set up.`,
      },
    ]);
    expect(refused.body).not.toHaveProperty('reset_url');
    // Moved back up, they sign in with their own password: nobody else set one.
    expect((await setRole(admin.cookie, fellow.id, 'admin')).status).toBe(200);
    await signIn(call, fellow.email, PASSWORD);
    // An owner outranks every role they have held, and may.
    expect((await setRole(owner.cookie, fellow.id, 'member')).status).toBe(200);
    const byOwner = await resetLink(owner.cookie, fellow.id);
    expect(
      (await call('POST', `/password-reset/${byOwner}`, { body: { password: 'set by whoever holds the link' } }))
        .status,
    ).toBe(200);
    // The reset is the holder's act in the log, and names who made the link they used.
    const log = await call('GET', '/security-log', { cookie: owner.cookie });
    const reset = log.body.data.find((entry: { action: string }) => entry.action === 'account.password_reset');
    expect(reset).toMatchObject({
      actor: { type: 'user', user_id: fellow.id },
      details: { sessions_ended: 1, link_made_by: owner.email },
    });

    // Nor an owner a fellow owner: moved down to admin, they were an owner.
    const partner = await makeUser(api.current.db, workspace.id, 'owner');
    expect((await setRole(owner.cookie, partner.id, 'admin')).status).toBe(200);
    const notForOwner = await copy(owner.cookie, partner.id);
    expect([notForOwner.status, notForOwner.body.error.message]).toEqual([
      403,
      `${partner.email} was an owner here before. This service sends no email, so a reset link is shown to copy, and it is the account itself: no one here may make one for them. Ask whoever runs this service for one (the CLI’s user reset-link makes it), or have email set up.`,
    ]);
    // Someone only ever a member is the admin's to copy, as before.
    const newcomer = await makeUser(api.current.db, workspace.id, 'member');
    expect(await isOpen(await resetLink(admin.cookie, newcomer.id))).toBe(true);
  });

  it('are offered by GET /team exactly where they would be made: can_make_reset_link for each person, as the viewer', async () => {
    const { owner, admin, member, workspace } = await team(api.current.db, call, 'Offered');
    const fellow = await makeUser(api.current.db, workspace.id, 'admin');
    expect(
      (await call('PATCH', `/team/members/${fellow.id}`, { cookie: owner.cookie, body: { role: 'member' } })).status,
    ).toBe(200);
    const offered = async (cookie: string) => {
      const listed = await call('GET', '/team', { cookie });
      expect(listed.status).toBe(200);
      return Object.fromEntries(
        (listed.body.members as Array<{ id: string; can_make_reset_link: boolean }>).map((person) => [
          person.id,
          person.can_make_reset_link,
        ]),
      );
    };
    // No email here: a link to copy, only for someone who never held the viewer's role or above,
    // and never for oneself (it would skip the current password).
    expect(await offered(admin.cookie)).toEqual({
      [owner.id]: false,
      [admin.id]: false,
      [member.id]: true,
      [fellow.id]: false,
    });
    expect(await offered(owner.cookie)).toEqual({
      [owner.id]: false,
      [admin.id]: true,
      [member.id]: true,
      [fellow.id]: true,
    });
    // A member manages no one.
    expect(Object.values(await offered(member.cookie))).toEqual([false, false, false, false]);
    // And each answer is what the link's own route does.
    for (const [id, expected] of Object.entries(await offered(admin.cookie))) {
      const made = await call('POST', `/team/members/${id}/reset-link`, { cookie: admin.cookie });
      expect([id, made.status === 200]).toEqual([id, expected]);
    }
    const forOwner = await call('POST', `/team/members/${owner.id}/reset-link`, { cookie: admin.cookie });
    expect(forOwner.body.error).toEqual({
      type: 'forbidden',
      message: 'Only owners can make a reset link for an owner.',
    });
  });

  it('GET /team names the role held before where that alone keeps the viewer from a reset link (reset_link_former_role)', async () => {
    const { owner, admin, member, workspace } = await team(api.current.db, call, 'Former roles');
    const setRole = (id: string, role: string) =>
      call('PATCH', `/team/members/${id}`, { cookie: owner.cookie, body: { role } });
    // An admin, then a member; an owner, then an admin; an owner, then a member.
    const exAdmin = await makeUser(api.current.db, workspace.id, 'admin');
    const ownerNowAdmin = await makeUser(api.current.db, workspace.id, 'owner');
    const ownerNowMember = await makeUser(api.current.db, workspace.id, 'owner');
    for (const [id, role] of [
      [exAdmin.id, 'member'],
      [ownerNowAdmin.id, 'admin'],
      [ownerNowMember.id, 'member'],
    ] as const) {
      expect((await setRole(id, role)).status).toBe(200);
    }
    const formerRoles = async (cookie: string) => {
      const listed = await call('GET', '/team', { cookie });
      expect(listed.status).toBe(200);
      return Object.fromEntries(
        (listed.body.members as Array<{ id: string; reset_link_former_role: string | null }>).map((person) => [
          person.id,
          person.reset_link_former_role,
        ]),
      );
    };
    // No email here. The admin: a fellow admin or an owner is kept from them by the role they
    // hold now (null: the row shows it), a former admin or owner now below them by that role.
    expect(await formerRoles(admin.cookie)).toEqual({
      [owner.id]: null,
      [admin.id]: null,
      [member.id]: null,
      [exAdmin.id]: 'admin',
      [ownerNowAdmin.id]: null,
      [ownerNowMember.id]: 'owner',
    });
    // The owner outranks a former admin; not a former owner.
    expect(await formerRoles(owner.cookie)).toEqual({
      [owner.id]: null,
      [admin.id]: null,
      [member.id]: null,
      [exAdmin.id]: null,
      [ownerNowAdmin.id]: 'owner',
      [ownerNowMember.id]: 'owner',
    });
    // A member manages no one, and is told nobody's former role.
    expect(Object.values(await formerRoles(member.cookie)).every((role) => role === null)).toBe(true);
    // Each one named is a Reset link the route refuses, for that former role.
    for (const [cookie, id] of [
      [admin.cookie, exAdmin.id],
      [admin.cookie, ownerNowMember.id],
      [owner.cookie, ownerNowAdmin.id],
    ] as const) {
      const refused = await call('POST', `/team/members/${id}/reset-link`, { cookie });
      expect([refused.status, refused.body.error.message]).toEqual([
        403,
        expect.stringMatching(/ was an? \w+ here before\. /),
      ]);
    }
  });

  it('are refused for an account moved down by a release that does not know the roles held before (a rolling deploy)', async () => {
    const { admin, workspace } = await team(api.current.db, call, 'Older release');
    const fellow = await makeUser(api.current.db, workspace.id, 'admin');
    // The previous release changes a role with a plain UPDATE of the role alone: the database
    // remembers the role left (migration 0035's trigger), not the release.
    await api.current.db('users').where({ id: fellow.id }).update({ role: 'member' });
    const refused = await call('POST', `/team/members/${fellow.id}/reset-link`, { cookie: admin.cookie });
    expect([
      refused.status,
      refused.body.error?.message?.startsWith(`${fellow.email} was an admin here before.`),
    ]).toEqual([403, true]);
    // Moved back up and down again, the highest role left is still what counts.
    await api.current.db('users').where({ id: fellow.id }).update({ role: 'admin' });
    await api.current.db('users').where({ id: fellow.id }).update({ role: 'member' });
    expect(await api.current.db('users').where({ id: fellow.id }).first('highest_former_role')).toEqual({
      highest_former_role: 'admin',
    });
  });
});
