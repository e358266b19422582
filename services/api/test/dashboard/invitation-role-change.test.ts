import { describe, expect, it } from '@jest/globals';
import { createUser, inviteMember, OPERATOR } from '@retention/domain';
import { useApi } from '../harness.js';
import { dashboardClient, PASSWORD, team } from './support.js';

/**
 * An account the operator made without a password (the CLI's `user create`) has a role but has
 * never signed in. Re-invited with another role, accepting gives the account that role: the
 * security log says so as a Team page role change does (`team.role_changed`, from and to), in
 * the inviter's name, since the inviter chose the role (docs/dashboard-api.md, "Invitations").
 */
const api = useApi();
const call = (...args: Parameters<ReturnType<typeof dashboardClient>>) => dashboardClient(api.current.url)(...args);

const tokenOf = (inviteUrl: string) => inviteUrl.split('/').at(-1)!;

async function securityLog(cookie: string) {
  const reply = await call('GET', '/security-log', { cookie });
  expect(reply.status).toBe(200);
  return reply.body.data as Array<Record<string, any>>;
}

describe('accepting an invitation that changes an existing account’s role', () => {
  it('records team.role_changed as the Team page does, with the inviter as the actor', async () => {
    const { owner, member, workspace } = await team(api.current.db, call, 'Re-invited');
    const never = await createUser(api.current.db, {
      workspace_id: workspace.id,
      email: 'never@example.com',
      role: 'admin',
    });
    // The operator invited someone as an admin in that account's name (`--actor`): a member
    // may not give that role, so the role change revokes it, as on the Team page.
    const sent = await inviteMember(
      api.current.db,
      {
        workspace_id: workspace.id,
        email: 'friend@example.com',
        role: 'admin',
        inviter_role: 'admin',
        base_url: 'http://x',
      },
      { type: 'operator', user_id: never.id, label: 'operator CLI as never@example.com' },
    );
    const invited = await call('POST', '/team/invitations', {
      cookie: owner.cookie,
      body: { email: 'Never@Example.com', role: 'member' },
    });
    expect(invited.status).toBe(201);
    const accepted = await call('POST', `/invitations/${tokenOf(invited.body.invite_url)}/accept`, {
      body: { name: 'Never Signed In', password: PASSWORD },
      headers: { 'user-agent': 'acceptor-browser' },
    });
    expect(accepted.status).toBe(200);
    expect(accepted.body.user).toMatchObject({ id: never.id, role: 'member' });

    // The Team page's change of another member, for the shape to compare with.
    const promoted = await call('PATCH', `/team/members/${member.id}`, {
      cookie: owner.cookie,
      body: { role: 'admin' },
    });
    expect(promoted.status).toBe(200);

    const changes = (await securityLog(owner.cookie)).filter((event) => event.action === 'team.role_changed');
    const byInvitation = changes.find((event) => event.target.id === never.id);
    const byTeamPage = changes.find((event) => event.target.id === member.id);
    expect(byInvitation).toMatchObject({
      object: 'security_event',
      action: 'team.role_changed',
      actor: { type: 'user', user_id: owner.id, label: owner.email },
      target: { type: 'user', id: never.id, label: 'never@example.com' },
      details: { from: 'admin', to: 'member' },
      // The inviter made no request when the link was spent: no address or browser of theirs.
      ip_address: null,
      user_agent: null,
    });
    expect(byTeamPage).toMatchObject({
      actor: { type: 'user', user_id: owner.id },
      details: { from: 'member', to: 'admin' },
    });
    // The same shape: the same keys, the same kind of actor, target and details.
    expect(Object.keys(byInvitation!).sort()).toEqual(Object.keys(byTeamPage!).sort());
    expect(Object.keys(byInvitation!.actor).sort()).toEqual(Object.keys(byTeamPage!.actor).sort());
    expect(Object.keys(byInvitation!.target).sort()).toEqual(Object.keys(byTeamPage!.target).sort());
    expect(Object.keys(byInvitation!.details).sort()).toEqual(Object.keys(byTeamPage!.details).sort());
    const revoked = (await securityLog(owner.cookie)).filter((event) => event.action === 'team.invitation_revoked');
    expect(revoked).toEqual([
      expect.objectContaining({
        actor: { type: 'user', user_id: owner.id, label: owner.email, email: owner.email },
        target: { type: 'invitation', id: sent.invitation.id, label: 'friend@example.com', exists: false },
        details: { reason: 'inviter_role_changed', invited_by: 'never@example.com' },
      }),
    ]);
    expect((await call('GET', `/invitations/${sent.token}`)).status).toBe(404);
    // The joining is still recorded, in the name of whoever accepted.
    const joined = (await securityLog(owner.cookie)).filter(
      (event) => event.action === 'team.joined' && event.target.id === never.id,
    );
    expect(joined.map((event) => [event.actor.user_id, event.details.role])).toEqual(
      expect.arrayContaining([[never.id, 'member']]),
    );
  });

  it('names the operator CLI when the operator sent the invitation', async () => {
    const { owner, workspace } = await team(api.current.db, call, 'Operator re-invite');
    const never = await createUser(api.current.db, {
      workspace_id: workspace.id,
      email: 'op@example.com',
      role: 'member',
    });
    const { token } = await inviteMember(
      api.current.db,
      { workspace_id: workspace.id, email: 'op@example.com', role: 'admin', inviter_role: null, base_url: 'http://x' },
      OPERATOR,
    );
    expect(
      (await call('POST', `/invitations/${token}/accept`, { body: { name: 'Op', password: PASSWORD } })).status,
    ).toBe(200);
    const changes = (await securityLog(owner.cookie)).filter((event) => event.action === 'team.role_changed');
    expect(changes).toEqual([
      expect.objectContaining({
        actor: { type: 'operator', user_id: null, label: 'operator CLI', email: null },
        target: { type: 'user', id: never.id, label: 'op@example.com', exists: true },
        details: { from: 'member', to: 'admin' },
      }),
    ]);
  });

  it('is refused to an inviter who could not give a role the account held before: accepting gives its holder the account', async () => {
    const { owner, admin, workspace } = await team(api.current.db, call, 'Former owner');
    const never = await createUser(api.current.db, {
      workspace_id: workspace.id,
      email: 'was-owner@example.com',
      role: 'owner',
    });
    const demoted = await call('PATCH', `/team/members/${never.id}`, {
      cookie: owner.cookie,
      body: { role: 'member' },
    });
    expect(demoted.status).toBe(200);
    const invite = (cookie: string) =>
      call('POST', '/team/invitations', { cookie, body: { email: 'was-owner@example.com', role: 'member' } });
    const refused = await invite(admin.cookie);
    expect([refused.status, refused.body.error]).toEqual([
      403,
      {
        type: 'forbidden',
        message: 'was-owner@example.com has been an owner of this workspace: only owners can invite that address.',
      },
    ]);
    expect(refused.body).not.toHaveProperty('invite_url');
    // An owner may, as they may give that role.
    expect((await invite(owner.cookie)).status).toBe(201);
  });

  it('is checked again as it is accepted: an account made an owner since the admin sent it is not handed over', async () => {
    const { owner, admin, workspace } = await team(api.current.db, call, 'Owner since');
    const account = await createUser(api.current.db, {
      workspace_id: workspace.id,
      email: 'later-owner@example.com',
      role: 'member',
    });
    const sent = await call('POST', '/team/invitations', {
      cookie: admin.cookie,
      body: { email: 'later-owner@example.com', role: 'member' },
    });
    expect(sent.status).toBe(201);
    // Made an owner and back: the admin may not invite that address now, nor hand it over with
    // the invitation sent before.
    for (const role of ['owner', 'member']) {
      const changed = await call('PATCH', `/team/members/${account.id}`, { cookie: owner.cookie, body: { role } });
      expect(changed.status).toBe(200);
    }
    const accept = (url: string) =>
      call('POST', `/invitations/${tokenOf(url)}/accept`, { body: { name: 'Taker', password: PASSWORD } });
    const refused = await accept(sent.body.invite_url);
    expect([refused.status, refused.body.error]).toEqual([
      409,
      {
        type: 'conflict',
        message: 'This invitation can no longer be accepted: ask an owner of the workspace for a new one.',
      },
    ]);
    expect(await api.current.db('users').where({ id: account.id }).first('password_hash', 'role')).toEqual({
      password_hash: null,
      role: 'member',
    });

    // The operator made an owner account at an address an admin had invited: not the admin's to give.
    const early = await call('POST', '/team/invitations', {
      cookie: admin.cookie,
      body: { email: 'boss@example.com', role: 'admin' },
    });
    expect(early.status).toBe(201);
    await createUser(api.current.db, { workspace_id: workspace.id, email: 'boss@example.com', role: 'owner' });
    expect((await accept(early.body.invite_url)).status).toBe(409);

    // An owner's invitation to the same address is theirs to give.
    const byOwner = await call('POST', '/team/invitations', {
      cookie: owner.cookie,
      body: { email: 'later-owner@example.com', role: 'member' },
    });
    expect((await accept(byOwner.body.invite_url)).status).toBe(200);
  });

  it('records no role change when the role stays, or for a new account', async () => {
    const { owner, workspace } = await team(api.current.db, call, 'Same role');
    await createUser(api.current.db, { workspace_id: workspace.id, email: 'same@example.com', role: 'member' });
    for (const email of ['same@example.com', 'brand-new@example.com']) {
      const invited = await call('POST', '/team/invitations', {
        cookie: owner.cookie,
        body: { email, role: 'member' },
      });
      const accepted = await call('POST', `/invitations/${tokenOf(invited.body.invite_url)}/accept`, {
        body: { name: 'Joiner', password: PASSWORD },
      });
      expect(accepted.status).toBe(200);
    }
    const actions = (await securityLog(owner.cookie)).map((event) => event.action);
    expect(actions).not.toContain('team.role_changed');
    // One when the operator added the account, one for each acceptance.
    expect(actions.filter((action) => action === 'team.joined')).toHaveLength(3);
  });
});
