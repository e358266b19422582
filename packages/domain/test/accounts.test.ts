import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  assertAcceptablePassword,
  changeMemberRole,
  checkCredentials,
  createSession,
  createWorkspace,
  hashPassword,
  inviteMember,
  loadSession,
  permissionsFor,
  verifyPassword,
} from '@retention/domain';
import { useTestDatabase } from '@retention/testkit';

const database = useTestDatabase();

describe('passwords', () => {
  // The test run hashes at argon2id's smallest cost (global setup); these check the real one.
  const testRunSetting = process.env.INSECURE_FAST_PASSWORD_HASHING;
  beforeAll(() => {
    delete process.env.INSECURE_FAST_PASSWORD_HASHING;
  });
  afterAll(() => {
    if (testRunSetting !== undefined) process.env.INSECURE_FAST_PASSWORD_HASHING = testRunSetting;
  });

  it('hashes with argon2id, verifies, and refuses a wrong or malformed one', async () => {
    const hash = await hashPassword('correct horse battery');
    expect(hash).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$[A-Za-z0-9_-]+\$[A-Za-z0-9_-]+$/);
    expect(hash).not.toContain('correct horse battery');
    expect(await hashPassword('correct horse battery')).not.toBe(hash);
    expect(await verifyPassword('correct horse battery', hash)).toBe(true);
    expect(await verifyPassword('correct horse batterY', hash)).toBe(false);
    expect(await verifyPassword('correct horse battery', 'not a hash')).toBe(false);
  });

  it('takes 10 to 256 characters', () => {
    expect(() => assertAcceptablePassword('123456789')).toThrow(/10 to 256/);
    expect(assertAcceptablePassword('1234567890')).toBe('1234567890');
    expect(assertAcceptablePassword('é'.repeat(256))).toHaveLength(256);
    expect(() => assertAcceptablePassword('x'.repeat(257))).toThrow(/10 to 256/);
    expect(() => assertAcceptablePassword(42)).toThrow();
  });

  it('costs an unknown email about what a wrong password costs, with the same error', async () => {
    const { db } = database.current;
    const workspace = await createWorkspace(db, { name: 'Timing' });
    await db('users').insert({
      workspace_id: workspace.id,
      email: 'known@timing.test',
      role: 'owner',
      password_hash: await hashPassword('the right password'),
    });
    // CPU time, not wall time: the argon2id derivation runs on libuv's threads, which the
    // process's CPU usage counts, and a busy machine stretches the wall clock, not the work.
    const timed = async (email: string) => {
      const started = process.cpuUsage();
      const error = await checkCredentials(db, email, 'a wrong password').catch((caught: unknown) => caught);
      const { user, system } = process.cpuUsage(started);
      return { ms: (user + system) / 1000, error };
    };
    await timed('unknown@timing.test'); // the dummy hash is made on first use
    const known = [];
    const unknown = [];
    for (let i = 0; i < 5; i += 1) {
      known.push(await timed('known@timing.test'));
      unknown.push(await timed('unknown@timing.test'));
    }
    expect(unknown[0]!.error).toEqual(known[0]!.error);
    const median = (runs: Array<{ ms: number }>) => runs.map((run) => run.ms).sort((a, b) => a - b)[2]!;
    // Both pay for one argon2id derivation (tens of ms); neither is a fast path.
    expect(median(unknown)).toBeGreaterThan(median(known) * 0.5);
    expect(median(unknown)).toBeGreaterThan(5);
  });
});

describe('INSECURE_FAST_PASSWORD_HASHING (test runs only)', () => {
  const saved = { fast: process.env.INSECURE_FAST_PASSWORD_HASHING, nodeEnv: process.env.NODE_ENV };
  afterAll(() => {
    process.env.INSECURE_FAST_PASSWORD_HASHING = saved.fast;
    process.env.NODE_ENV = saved.nodeEnv;
    if (saved.fast === undefined) delete process.env.INSECURE_FAST_PASSWORD_HASHING;
    if (saved.nodeEnv === undefined) delete process.env.NODE_ENV;
  });

  it("hashes at argon2id's smallest cost, and a hash verifies at the cost it records either way", async () => {
    process.env.INSECURE_FAST_PASSWORD_HASHING = '1';
    const fast = await hashPassword('correct horse battery');
    expect(fast).toMatch(/^\$argon2id\$v=19\$m=64,t=1,p=1\$/);
    expect(await verifyPassword('correct horse battery', fast)).toBe(true);
    expect(await verifyPassword('correct horse batterY', fast)).toBe(false);

    delete process.env.INSECURE_FAST_PASSWORD_HASHING;
    const real = await hashPassword('correct horse battery');
    expect(real).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
    process.env.INSECURE_FAST_PASSWORD_HASHING = '1';
    expect(await verifyPassword('correct horse battery', real)).toBe(true);
  });

  it('never applies with NODE_ENV=production, whatever the variable says', async () => {
    process.env.INSECURE_FAST_PASSWORD_HASHING = '1';
    process.env.NODE_ENV = 'production';
    expect(await hashPassword('correct horse battery')).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
  });
});

describe('sessions', () => {
  it('end after the idle timeout and after the absolute lifetime, whichever comes first', async () => {
    const { db } = database.current;
    const workspace = await createWorkspace(db, { name: 'Sessions' });
    const [user] = await db('users')
      .insert({ workspace_id: workspace.id, email: 's@sessions.test', role: 'member' })
      .returning('id');
    const short = { idleMs: 300, maxAgeMs: 60_000 };
    const idle = await createSession(db, { user_id: user.id, workspace_id: workspace.id }, short);
    expect(await loadSession(db, idle.value, short)).not.toBeNull();
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(await loadSession(db, idle.value, short)).toBeNull();

    const capped = { idleMs: 60_000, maxAgeMs: 300 };
    const absolute = await createSession(db, { user_id: user.id, workspace_id: workspace.id }, capped);
    expect(absolute.session.idle_expires_at.getTime()).toBeLessThanOrEqual(absolute.session.expires_at.getTime());
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(await loadSession(db, absolute.value, capped)).toBeNull();
    expect(await loadSession(db, 'x'.repeat(43), capped)).toBeNull();
    expect(await loadSession(db, 'not even the right shape', capped)).toBeNull();
  });
});

describe('roles', () => {
  it('derives permissions from the role table', () => {
    expect(permissionsFor('member')).toEqual({
      manage_campaigns: false,
      read_tokens: false,
      manage_tokens: false,
      manage_webhooks: false,
      manage_team: false,
      manage_workspace: false,
      manage_processor: false,
      read_security_log: false,
      assignable_roles: [],
    });
    expect(permissionsFor('admin')).toMatchObject({
      read_tokens: true,
      manage_team: true,
      manage_workspace: false,
      assignable_roles: ['admin', 'member'],
    });
    expect(permissionsFor('owner')).toMatchObject({
      manage_processor: true,
      assignable_roles: ['owner', 'admin', 'member'],
    });
  });

  it('two owners demoting each other at once leave one owner', async () => {
    const { db } = database.current;
    const workspace = await createWorkspace(db, { name: 'Race' });
    const owners = await db('users')
      .insert([
        { workspace_id: workspace.id, email: 'a@race.test', role: 'owner' },
        { workspace_id: workspace.id, email: 'b@race.test', role: 'owner' },
      ])
      .returning('id');
    const actor = { type: 'operator' as const, label: 'test' };
    const results = await Promise.allSettled(
      owners.map((owner: { id: string }) =>
        changeMemberRole(
          db,
          { workspace_id: workspace.id, user_id: owner.id, role: 'admin', actor_role: 'owner' },
          actor,
        ),
      ),
    );
    expect(results.map((result) => result.status).sort()).toEqual(['fulfilled', 'rejected']);
    expect(await db('users').where({ workspace_id: workspace.id, role: 'owner' })).toHaveLength(1);
  });

  it('an admin may not invite an owner', async () => {
    const { db } = database.current;
    const workspace = await createWorkspace(db, { name: 'Invites' });
    await expect(
      inviteMember(
        db,
        {
          workspace_id: workspace.id,
          email: 'o@invites.test',
          role: 'owner',
          inviter_role: 'admin',
          base_url: 'http://x',
        },
        { type: 'operator', label: 'test' },
      ),
    ).rejects.toMatchObject({ type: 'forbidden' });
    expect(await db('account_links').where({ workspace_id: workspace.id })).toHaveLength(0);
  });
});
