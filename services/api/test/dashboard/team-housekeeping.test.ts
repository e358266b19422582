import { describe, expect, it } from '@jest/globals';
import { MIGRATIONS } from '@retention/db';
import { createToken, newTokenRow, OPERATOR } from '@retention/domain';
import { useApi } from '../harness.js';
import { dashboardClient, PASSWORD, sessionCookieOf, team } from './support.js';

/**
 * What a workspace admin doing housekeeping meets (docs/dashboard-api.md, "API tokens" and
 * "Team"): a removed person's tokens still say who made them, and can be revoked with the
 * removal; an invitation that replaces another says so; accepting an invitation in a browser
 * signed in as someone else ends that session; refusals are in words, not codes or ids.
 */
const api = useApi();
const call = (...args: Parameters<ReturnType<typeof dashboardClient>>) => dashboardClient(api.current.url)(...args);

const tokenOf = (inviteUrl: string) => inviteUrl.split('/').at(-1)!;

async function tokensOf(cookie: string) {
  const reply = await call('GET', '/tokens', { cookie });
  expect(reply.status).toBe(200);
  return reply.body.data as Array<Record<string, any>>;
}

describe('the API tokens of someone removed from the team', () => {
  it('keep working and still name their creator, by the email kept on the token; the CLI’s say null', async () => {
    const { owner, admin, workspace } = await team(api.current.db, call, 'Leaver tokens');
    const made = await call('POST', '/tokens', { cookie: admin.cookie, body: { name: 'alice-ci' } });
    expect(made.status).toBe(201);
    expect(made.body.created_by).toEqual({ id: admin.id, name: 'admin person', email: admin.email, removed: false });
    await createToken(api.current.db, { workspace_id: workspace.id, name: 'cli-made' }, OPERATOR);

    const removed = await call('DELETE', `/team/members/${admin.id}`, { cookie: owner.cookie });
    expect(removed.status).toBe(204);

    const listed = await tokensOf(owner.cookie);
    expect(listed.find((token) => token.name === 'alice-ci')).toMatchObject({
      created_by: { id: null, name: null, email: admin.email, removed: true },
      revoked_at: null,
    });
    expect(listed.find((token) => token.name === 'cli-made')!.created_by).toBeNull();
    // Tokens belong to the workspace: the removal alone does not stop it.
    expect((await api.current.get('/api/v1/stats', made.body.token)).status).toBe(200);
  });

  it('are revoked with the removal when asked (revoke_tokens), each logged as token.revoked', async () => {
    const { owner, admin, member } = await team(api.current.db, call, 'Leaver revoke');
    const first = await call('POST', '/tokens', { cookie: admin.cookie, body: { name: 'alice-ci' } });
    const second = await call('POST', '/tokens', { cookie: admin.cookie, body: { name: 'alice-reports' } });
    const already = await call('POST', '/tokens', { cookie: admin.cookie, body: { name: 'alice-old' } });
    expect((await call('POST', `/tokens/${already.body.id}/revoke`, { cookie: admin.cookie })).status).toBe(200);
    const others = await call('POST', '/tokens', { cookie: owner.cookie, body: { name: 'owner-ci' } });

    const refused = await call('DELETE', `/team/members/${admin.id}`, {
      cookie: owner.cookie,
      body: { revoke_tokens: 'yes' },
    });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatchObject({ type: 'invalid_param', param: 'revoke_tokens' });
    expect((await api.current.get('/api/v1/stats', first.body.token)).status).toBe(200);

    const removed = await call('DELETE', `/team/members/${admin.id}`, {
      cookie: owner.cookie,
      body: { revoke_tokens: true },
    });
    expect(removed.status).toBe(204);
    expect((await api.current.get('/api/v1/stats', first.body.token)).status).toBe(401);
    expect((await api.current.get('/api/v1/stats', second.body.token)).status).toBe(401);
    expect((await api.current.get('/api/v1/stats', others.body.token)).status).toBe(200);

    const listed = await tokensOf(owner.cookie);
    for (const name of ['alice-ci', 'alice-reports']) {
      expect(listed.find((token) => token.name === name)).toMatchObject({
        revoked_at: expect.any(String),
        created_by: { email: admin.email, removed: true },
      });
    }
    const log = (await call('GET', '/security-log', { cookie: owner.cookie })).body.data as Array<Record<string, any>>;
    const revocations = log.filter((event) => event.action === 'token.revoked');
    // The earlier revocation by hand, and one for each token the removal revoked, by the owner.
    expect(revocations.filter((event) => event.actor.user_id === owner.id).map((event) => event.target)).toEqual(
      expect.arrayContaining([
        { type: 'api_token', id: first.body.id, label: 'alice-ci', exists: true },
        { type: 'api_token', id: second.body.id, label: 'alice-reports', exists: true },
      ]),
    );
    expect(revocations).toHaveLength(3);
    expect(revocations.find((event) => event.target.id === first.body.id)!.details).toEqual({
      hint: first.body.hint,
    });
    // Members are never asked: the route is manage_team's.
    expect((await call('DELETE', `/team/members/${owner.id}`, { cookie: member.cookie })).status).toBe(403);
  });

  it('made before the email was kept, by someone removed before, take it from the security log', async () => {
    const { owner, admin } = await team(api.current.db, call, 'Leaver backfill');
    const made = await call('POST', '/tokens', { cookie: admin.cookie, body: { name: 'early-ci' } });
    expect((await call('DELETE', `/team/members/${admin.id}`, { cookie: owner.cookie })).status).toBe(204);
    // The row as it was before 0026: the creator gone (SET NULL) and no email kept.
    const migration = MIGRATIONS.find((m) => m.name === '0026-token-creator-email')!;
    await migration.down(api.current.db);
    await migration.up(api.current.db);
    const listed = await tokensOf(owner.cookie);
    expect(listed.find((token) => token.id === made.body.id)!.created_by).toEqual({
      id: null,
      name: null,
      email: admin.email,
      removed: true,
    });
  });
});

describe('a token minted by the previous release during a rolling deploy', () => {
  it('still keeps its creator’s email: the database fills it in on insert', async () => {
    const { owner, admin, workspace } = await team(api.current.db, call, 'Rolling');
    // What the previous release inserts: created_by, and no created_by_email, which it does not know.
    const { row } = newTokenRow({ workspace_id: workspace.id, name: 'old-release-ci' });
    const [inserted] = await api.current
      .db('api_tokens')
      .insert({ ...row, created_by: admin.id })
      .returning(['id', 'created_by_email']);
    expect(inserted.created_by_email).toBe(admin.email);
    expect((await call('DELETE', `/team/members/${admin.id}`, { cookie: owner.cookie })).status).toBe(204);
    const listed = await tokensOf(owner.cookie);
    expect(listed.find((token) => token.id === inserted.id)!.created_by).toMatchObject({
      email: admin.email,
      removed: true,
    });
  });
});

describe('an invitation to an address with one pending', () => {
  it('says which one it replaced (replaced: id, role, created_at); a first one says null', async () => {
    const { owner } = await team(api.current.db, call, 'Re-invite');
    const first = await call('POST', '/team/invitations', {
      cookie: owner.cookie,
      body: { email: 'dave@example.com', role: 'member' },
    });
    expect(first.status).toBe(201);
    expect(first.body.replaced).toBeNull();
    const second = await call('POST', '/team/invitations', {
      cookie: owner.cookie,
      body: { email: 'Dave@Example.com', role: 'admin' },
    });
    expect(second.status).toBe(201);
    expect(second.body.replaced).toEqual({
      id: first.body.invitation.id,
      role: 'member',
      created_at: first.body.invitation.created_at,
    });
    expect((await call('GET', `/invitations/${tokenOf(first.body.invite_url)}`)).status).toBe(404);
    // Nobody's account: existing_account is null.
    expect([first.body.existing_account, second.body.existing_account]).toEqual([null, null]);
  });

  it('names an account without a password the address already names, with its role now (existing_account); GET /team says who has a password to those who may invite', async () => {
    const { owner, admin, member, workspace } = await team(api.current.db, call, 'Existing');
    const [ops] = await api.current
      .db('users')
      .insert({ workspace_id: workspace.id, email: 'ops@example.com', role: 'admin', password_hash: null })
      .returning('id');
    // Owners and admins invite, and Invite says before sending whether the address signs in.
    for (const viewer of [owner, admin]) {
      const listed = await call('GET', '/team', { cookie: viewer.cookie });
      expect(
        (listed.body.members as Array<{ email: string; has_password: boolean }>).map(({ email, has_password }) => ({
          email,
          has_password,
        })),
      ).toEqual([
        { email: owner.email, has_password: true },
        { email: admin.email, has_password: true },
        { email: member.email, has_password: true },
        { email: 'ops@example.com', has_password: false },
      ]);
    }
    // A member invites nobody: whose account has a password is not theirs to know.
    const seenByMember = await call('GET', '/team', { cookie: member.cookie });
    expect(seenByMember.status).toBe(200);
    expect(seenByMember.body.members).toHaveLength(4);
    for (const person of seenByMember.body.members as Array<Record<string, unknown>>) {
      expect(person).not.toHaveProperty('has_password');
    }
    const invited = await call('POST', '/team/invitations', {
      cookie: owner.cookie,
      body: { email: 'OPS@example.com', role: 'member' },
    });
    expect(invited.status).toBe(201);
    expect(invited.body.existing_account).toEqual({ id: (ops as { id: string }).id, role: 'admin' });
  });
});

describe('accepting an invitation in a browser signed in as someone else', () => {
  it('ends the session that browser held, and signs it in as the invited person', async () => {
    const { owner } = await team(api.current.db, call, 'Swap');
    const invited = await call('POST', '/team/invitations', {
      cookie: owner.cookie,
      body: { email: 'dave.member@example.com', role: 'member' },
    });
    const accepted = await call('POST', `/invitations/${tokenOf(invited.body.invite_url)}/accept`, {
      cookie: owner.cookie,
      body: { name: 'Dave', password: PASSWORD },
    });
    expect(accepted.status).toBe(200);
    expect(accepted.body.user.email).toBe('dave.member@example.com');
    // The owner's session, whose cookie the browser no longer has, is over on the server too.
    expect((await call('GET', '/me', { cookie: owner.cookie })).status).toBe(401);
    const dave = await call('GET', '/me', { cookie: sessionCookieOf(accepted) });
    expect(dave.status).toBe(200);
    expect(dave.body.user.email).toBe('dave.member@example.com');
  });
});

describe('refusals in words', () => {
  it('names who may do it, not the role code or the permission', async () => {
    const { member } = await team(api.current.db, call, 'Words');
    const refused = await call('POST', '/tokens', { cookie: member.cookie, body: { name: 'x' } });
    expect(refused.status).toBe(403);
    expect(refused.body).toEqual({
      error: { type: 'forbidden', message: 'Only owners and admins can manage API tokens.' },
    });
  });

  it('says who may touch an owner, and that an invitation cancelled in another tab is no longer pending', async () => {
    const { owner, admin } = await team(api.current.db, call, 'Words of Team');
    const demote = await call('PATCH', `/team/members/${owner.id}`, { cookie: admin.cookie, body: { role: 'member' } });
    expect(demote.status).toBe(403);
    expect(demote.body.error).toEqual({
      type: 'forbidden',
      message: 'Only owners can give the owner role, or change or remove an owner.',
    });
    const sent = await call('POST', '/team/invitations', {
      cookie: owner.cookie,
      body: { email: 'gone@example.com', role: 'member' },
    });
    const path = `/team/invitations/${sent.body.invitation.id}`;
    expect((await call('DELETE', path, { cookie: owner.cookie })).status).toBe(204);
    const again = await call('DELETE', path, { cookie: owner.cookie });
    expect(again.status).toBe(404);
    expect(again.body.error).toEqual({
      type: 'not_found',
      message: 'This invitation is no longer pending: it was accepted or canceled.',
    });
  });

  it('says someone removed in another tab is no longer in the workspace, without their id', async () => {
    const { owner, member } = await team(api.current.db, call, 'Gone');
    expect((await call('DELETE', `/team/members/${member.id}`, { cookie: owner.cookie })).status).toBe(204);
    const changed = await call('PATCH', `/team/members/${member.id}`, {
      cookie: owner.cookie,
      body: { role: 'admin' },
    });
    expect(changed.status).toBe(404);
    expect(changed.body.error).toMatchObject({
      type: 'not_found',
      message: 'This person is no longer in the workspace.',
    });
  });
});
