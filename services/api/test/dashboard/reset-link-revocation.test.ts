import { describe, expect, it } from '@jest/globals';
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
    const forThemself = await resetLink(partnerCookie, partner.id);
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
});
