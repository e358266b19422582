import { randomBytes } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import { MIGRATIONS } from '@retention/db';
import { useApi } from '../harness.js';
import { dashboardClient, team } from './support.js';

/**
 * One address, one person, whatever its case: an invitation keeps the spelling it was typed in
 * (the email goes to it, and the account takes it), as users do, and is compared lower-cased,
 * as users, sign-in and password resets are (docs/dashboard-api.md, "Team").
 */
const api = useApi();
const call = (...args: Parameters<ReturnType<typeof dashboardClient>>) => dashboardClient(api.current.url)(...args);

const tokenOf = (inviteUrl: string) => inviteUrl.split('/').at(-1)!;

async function pendingInvitations(cookie: string) {
  const listed = await call('GET', '/team', { cookie });
  expect(listed.status).toBe(200);
  return listed.body.invitations as Array<{ id: string; email: string; role: string }>;
}

describe('an invitation to an address typed in another case', () => {
  it('replaces the pending one, joins as one account, signs in in any case, and is not invited again', async () => {
    const { owner } = await team(api.current.db, call, 'Spelling');
    const invite = (email: string, role = 'member') =>
      call('POST', '/team/invitations', { cookie: owner.cookie, body: { email, role } });
    const first = await invite('Ann@Example.COM');
    expect(first.status).toBe(201);
    expect(first.body.invitation.email).toBe('Ann@Example.COM');
    const second = await invite('ann@example.com', 'admin');
    expect(second.status).toBe(201);
    expect(second.body.replaced).toMatchObject({ id: first.body.invitation.id, role: 'member' });
    expect((await pendingInvitations(owner.cookie)).map((invitation) => invitation.email)).toEqual(['ann@example.com']);
    expect((await call('GET', `/invitations/${tokenOf(first.body.invite_url)}`)).status).toBe(404);

    const accepted = await call('POST', `/invitations/${tokenOf(second.body.invite_url)}/accept`, {
      body: { name: 'Ann', password: 'a long enough password' },
    });
    expect(accepted.status).toBe(200);
    expect(accepted.body.user).toMatchObject({ email: 'ann@example.com', role: 'admin' });
    for (const email of ['ANN@EXAMPLE.COM', 'Ann@Example.com', 'ann@example.com']) {
      const signedIn = await call('POST', '/session', { body: { email, password: 'a long enough password' } });
      expect([email, signedIn.status]).toEqual([email, 200]);
    }
    const again = await invite('ANN@example.COM');
    expect(again.status).toBe(409);
    expect(again.body.error).toEqual({
      type: 'conflict',
      message: 'ann@example.com is already a member of this workspace.',
    });
    expect(await pendingInvitations(owner.cookie)).toEqual([]);
    const members = (await call('GET', '/team', { cookie: owner.cookie })).body.members as Array<{ email: string }>;
    expect(members.filter((member) => member.email.toLowerCase() === 'ann@example.com')).toHaveLength(1);
  });

  it('sent at once in several spellings, leaves one pending invitation, not one per spelling', async () => {
    const { owner, admin } = await team(api.current.db, call, 'Spelling at once');
    const spellings = ['Bob@Example.com', 'bob@example.com', 'BOB@EXAMPLE.COM', 'bob@Example.COM', 'Bob@example.com'];
    const sent = await Promise.all(
      spellings.flatMap((email) =>
        [owner, admin].map(({ cookie }) =>
          call('POST', '/team/invitations', { cookie, body: { email, role: 'member' } }),
        ),
      ),
    );
    expect(sent.map((reply) => reply.status)).toEqual(sent.map(() => 201));
    const pending = await pendingInvitations(owner.cookie);
    expect(pending).toHaveLength(1);
    // Each but the first replaced the one before it: one link works, the last one's.
    const live = await Promise.all(
      sent.map(async (reply) => (await call('GET', `/invitations/${tokenOf(reply.body.invite_url)}`)).status),
    );
    expect(live.filter((code) => code === 200)).toHaveLength(1);
    expect(sent.filter((reply) => reply.body.replaced === null)).toHaveLength(1);
  });
});

describe('migration 0027 over invitations pending twice for one address', () => {
  it('keeps the newest pending and revokes the older, whatever their case', async () => {
    const { owner, workspace } = await team(api.current.db, call, 'Spelling before 0027');
    const migration = MIGRATIONS.find((m) => m.name === '0027-one-open-invitation')!;
    await migration.down(api.current.db);
    // What two invitations sent at once could leave before 0027: both pending.
    const row = (email: string, createdAt: Date) => ({
      token_hash: randomBytes(32).toString('hex'),
      kind: 'invitation',
      workspace_id: workspace.id,
      email,
      role: 'member',
      created_at: createdAt,
      expires_at: new Date(Date.now() + 86_400_000),
    });
    const [older, newer] = await api.current
      .db('account_links')
      .insert([
        row('Cy@Example.com', new Date(Date.now() - 60_000)),
        row('cy@example.com', new Date(Date.now() - 30_000)),
      ])
      .returning('id');
    await migration.up(api.current.db);
    expect((await pendingInvitations(owner.cookie)).map((invitation) => invitation.id)).toEqual([newer.id]);
    const revoked = await api.current.db('account_links').where({ id: older.id }).first('revoked_at');
    expect(revoked.revoked_at).not.toBeNull();
  });
});

describe('an invitation to an address longer than mail allows', () => {
  it('is refused at the field: at most 64 characters before the @ (RFC 5321), so its email could arrive', async () => {
    const { owner } = await team(api.current.db, call, 'Long address');
    const invite = (email: string) =>
      call('POST', '/team/invitations', { cookie: owner.cookie, body: { email, role: 'member' } });
    const refused = await invite(`${'a'.repeat(65)}@example.com`);
    expect([refused.status, refused.body.error]).toEqual([
      400,
      {
        type: 'invalid_param',
        message: 'email: must have at most 64 characters before the @',
        param: 'email',
      },
    ]);
    expect((await invite(`${'a'.repeat(300)}@example.com`)).status).toBe(400);
    expect((await invite(`${'a'.repeat(64)}@example.com`)).status).toBe(201);
  });
});
