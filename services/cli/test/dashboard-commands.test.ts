import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { loadFixtures } from '@retention/domain';
import { storedSigningSecrets, useTestDatabase, testSecretsKeyBytes } from '@retention/testkit';
import { createTestCertificate, type TestCertificate } from '../../worker/test/support/certificate.js';
import { DnsServer } from '../../worker/test/support/dns-server.js';
import { Receiver } from '../../worker/test/support/receiver.js';
import { cliWithEnv, failedDelivery } from './helpers.js';

/** The commands added with the dashboard, and the security log they write as the operator. */
const database = useTestDatabase();
const BASE_URL = 'https://retention.test';
const ENV: Record<string, string> = { BASE_URL, WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' };
const run = (...args: string[]) => cliWithEnv(database.current.url, ENV, ...args);
/** The endpoint's host, known only to the test's own name server (WEBHOOK_DNS_SERVERS). */
const HOOK_HOST = 'healthy-5.test';

let workspace: string;
let owner: string;
let member: string;
let certificate: TestCertificate;
let receiver: Receiver;
let dns: DnsServer;

beforeAll(async () => {
  const result = await loadFixtures(database.current.db, testSecretsKeyBytes(), {
    workspaces: [
      {
        key: 'A',
        users: [
          { key: 'owner', email: 'owner@dash.test', role: 'owner' },
          { key: 'member', email: 'member@dash.test', role: 'member' },
        ],
      },
    ],
  });
  workspace = result.workspaces.A!.id;
  owner = result.workspaces.A!.users.owner!;
  member = result.workspaces.A!.users.member!;
  certificate = await createTestCertificate();
  receiver = await Receiver.start(certificate, BASE_URL);
  dns = await DnsServer.start();
  dns.addA(HOOK_HOST, '127.0.0.1', 60);
  ENV.WEBHOOK_DNS_SERVERS = dns.address;
});

afterAll(async () => {
  await receiver.close();
  await dns.close();
  await certificate.remove();
});

const actionsOn = (targetId: string) =>
  database.current.db('security_events').where({ target_id: targetId }).orderBy('created_at');

describe('user invite and user reset-link', () => {
  it('prints a one-time invitation link, revoking the earlier one, recorded as the operator', async () => {
    const first = await run('user', 'invite', '--workspace', workspace, '--email', 'new@dash.test', '--role', 'admin');
    expect(first.code).toBe(0);
    expect(Object.keys(first.json).sort()).toEqual(['email', 'expires_at', 'id', 'invite_url', 'role']);
    expect(first.json.invite_url).toMatch(/^https:\/\/retention\.test\/dashboard\/invite\/[A-Za-z0-9_-]{43}$/);
    const second = await run(
      ...['user', 'invite', '--workspace', workspace, '--email', 'new@dash.test', '--role', 'member', '--actor', owner],
    );
    expect(second.code).toBe(0);
    const links = await database.current.db('account_links').where({ email: 'new@dash.test' }).orderBy('created_at');
    expect(links.map((link) => link.revoked_at === null)).toEqual([false, true]);
    const [recorded] = await actionsOn(second.json.id);
    expect(recorded).toMatchObject({ action: 'team.invited', actor_type: 'operator', actor_user_id: owner });
    expect((await run('user', 'invite', '--workspace', workspace, '--email', 'x', '--role', 'admin')).code).not.toBe(0);
  });

  it('prints a reset link for a user', async () => {
    const reset = await run('user', 'reset-link', '--id', member);
    expect(reset.code).toBe(0);
    expect(reset.json.reset_url).toMatch(/\/dashboard\/reset\/[A-Za-z0-9_-]{43}$/);
    expect(Date.parse(reset.json.expires_at) - Date.now()).toBeLessThanOrEqual(3_600_000);
    expect((await run('user', 'reset-link', '--id', '00000000-0000-4000-8000-000000000000')).error?.type).toBe(
      'not_found',
    );
  });
});

describe('user list, and user reset-link by address', () => {
  it("lists the workspace's people with their ids and whether they can sign in, never a password", async () => {
    const users = () => database.current.db('users').where({ id: owner });
    await users().update({ password_hash: 'scrypt$not-a-real-hash' });
    const listed = await run('user', 'list', '--workspace', workspace).finally(() =>
      users().update({ password_hash: null }),
    );
    expect(listed.code).toBe(0);
    expect(listed.json.object).toBe('list');
    const people = listed.json.data as Array<Record<string, unknown>>;
    expect(people.find((person) => person.id === owner)).toMatchObject({
      email: 'owner@dash.test',
      role: 'owner',
      has_password: true,
    });
    expect(people.find((person) => person.id === member)).toMatchObject({ role: 'member', has_password: false });
    expect(JSON.stringify(listed.json)).not.toContain('scrypt');
    expect((await run('user', 'list', '--workspace', '00000000-0000-4000-8000-000000000000')).error?.type).toBe(
      'not_found',
    );
  });

  it('makes a reset link for the person an address names, in any case, and says what to do with an invitation id', async () => {
    const reset = await run('user', 'reset-link', '--workspace', workspace, '--email', 'MEMBER@dash.test');
    expect(reset.code).toBe(0);
    expect(reset.json.reset_url).toMatch(/\/dashboard\/reset\/[A-Za-z0-9_-]{43}$/);
    const link = await database.current
      .db('account_links')
      .where({ kind: 'password_reset', user_id: member })
      .whereNull('revoked_at')
      .first();
    expect(link).toBeDefined();

    // The id user invite prints is the invitation's: the answer says so, and what to run.
    const invited = await run(
      'user',
      'invite',
      '--workspace',
      workspace,
      '--email',
      'later@dash.test',
      '--role',
      'member',
    );
    for (const args of [
      ['--id', invited.json.id],
      ['--workspace', workspace, '--email', 'later@dash.test'],
    ]) {
      const refused = await run('user', 'reset-link', ...args);
      expect(refused.code).toBe(1);
      expect(refused.error).toEqual({
        type: 'not_found',
        message: expect.stringContaining('later@dash.test has an invitation') as unknown as string,
      });
      expect(refused.error?.message).toContain('run user invite again');
    }
    const nobody = await run('user', 'reset-link', '--workspace', workspace, '--email', 'nobody@dash.test');
    expect(nobody.error?.message).toMatch(/^No user with email nobody@dash.test in workspace .*user list/);
  });

  it('takes either --id or --workspace with --email, and says so otherwise', async () => {
    for (const args of [
      [],
      ['--id', member, '--workspace', workspace, '--email', 'member@dash.test'],
      ['--email', 'member@dash.test'],
      ['--workspace', workspace],
    ]) {
      const refused = await run('user', 'reset-link', ...args);
      expect(refused.code).toBe(2);
      expect(refused.error?.message).toMatch(/^Give either --id U, or --workspace W with --email E/);
    }
  });
});

describe('team and workspace changes from the CLI are in the security log', () => {
  it('user create and workspace update', async () => {
    const created = await run(
      'user',
      'create',
      '--workspace',
      workspace,
      '--email',
      'direct@dash.test',
      '--role',
      'member',
    );
    expect((await actionsOn(created.json.id)).map((row) => [row.action, row.actor_type])).toEqual([
      ['team.joined', 'operator'],
    ]);
    await run('workspace', 'update', '--id', workspace, '--name', 'Renamed by CLI', '--processor', 'disconnected');
    const [updated] = await actionsOn(workspace);
    expect(updated).toMatchObject({ action: 'workspace.updated', actor_type: 'operator' });
    expect(updated.details).toMatchObject({ name: { to: 'Renamed by CLI' }, processor: { to: 'disconnected' } });
    await run('workspace', 'update', '--id', workspace, '--processor', 'connected');
  });
});

describe('token and webhook changes from the CLI are in the security log', () => {
  it('token create / revoke, webhook create, roll-secret (with overlap), recover and resend', async () => {
    const token = await run('token', 'create', '--workspace', workspace, '--name', 'cli');
    await run('token', 'revoke', '--id', token.json.id);
    expect((await actionsOn(token.json.id)).map((row) => [row.action, row.actor_type])).toEqual([
      ['token.created', 'operator'],
      ['token.revoked', 'operator'],
    ]);

    receiver.route('/cli-hook', { secret: 'unused', behaviour: { kind: 'status', status: 200 } });
    const created = await cliWithEnv(
      database.current.url,
      ENV,
      ...['webhook', 'create', '--workspace', workspace].concat([
        '--actor',
        owner,
        '--name',
        'CLI',
        '--url',
        receiver.url('/cli-hook', HOOK_HOST),
      ]),
    );
    expect(created.code).toBe(0);
    expect((await run('webhook', 'roll-secret', '--id', created.json.id, '--actor', member)).error?.type).toBe(
      'forbidden',
    );
    expect(
      (await run('webhook', 'roll-secret', '--id', created.json.id, '--actor', owner, '--overlap', '25h')).code,
    ).not.toBe(0);
    const rolled = await run('webhook', 'roll-secret', '--id', created.json.id, '--actor', owner, '--overlap', '1h');
    expect(rolled.code).toBe(0);
    expect(rolled.json).toMatchObject({ id: created.json.id });
    expect(rolled.json.secret).toMatch(/^whsec_/);
    expect(await storedSigningSecrets(database.current.db, created.json.id)).toMatchObject({
      current: rolled.json.secret,
      previous: created.json.secret,
    });

    const db = database.current.db;
    const [event] = await db('events')
      .insert({ workspace_id: workspace, type: 'recovery.opened', data: {} })
      .returning('id');
    const delivery = { id: await failedDelivery(db, { workspace, endpoint: created.json.id, event: event.id }) };
    const since = new Date(Date.now() - 60_000).toISOString();
    const recovered = await run('webhook', 'recover', '--id', created.json.id, '--since', since, '--actor', owner);
    expect(recovered.json).toEqual({ requeued: 1 });
    await db('webhook_deliveries')
      .where({ id: delivery.id })
      .update({ status: 'failed', next_attempt_at: null, completed_at: new Date() });

    receiver.route('/cli-hook', { secret: rolled.json.secret, behaviour: { kind: 'status', status: 200 } });
    const resent = await cliWithEnv(
      database.current.url,
      ENV,
      'webhook',
      'resend',
      '--delivery',
      delivery.id,
      '--actor',
      owner,
    );
    // In-process, the CLI cannot trust the test's self-signed certificate (NODE_EXTRA_CA_CERTS
    // is read at process start), so the attempt fails at TLS: still a logged attempt, numbered
    // after the first. The dashboard test sends a resend that succeeds to a trusting sender.
    expect(resent.code).toBe(0);
    expect(resent.json).toMatchObject({ delivery_id: delivery.id, attempt: 2, outcome: 'failed', http_status: null });
    // It failed at TLS, past the name: resolved by WEBHOOK_DNS_SERVERS, as the worker resolves.
    expect(resent.json.error).not.toMatch(/resolve/);
    expect(dns.queries.get(HOOK_HOST)).toBeGreaterThan(0);
    expect(await db('webhook_deliveries').where({ id: delivery.id }).first()).toMatchObject({
      status: 'failed',
      lease_expires_at: null,
    });

    expect((await actionsOn(created.json.id)).map((row) => [row.action, row.actor_type, row.actor_user_id])).toEqual([
      ['webhook.created', 'operator', owner],
      ['webhook.secret_rolled', 'operator', owner],
      ['webhook.deliveries_requeued', 'operator', owner],
    ]);
  });
});

describe('webhook roll-secret during an earlier roll’s overlap', () => {
  it('is refused, saying until when and how to end it; --end-overlap ends it on purpose', async () => {
    const created = await run(
      ...['webhook', 'create', '--workspace', workspace, '--actor', owner, '--name', 'Rolled twice'],
      ...['--url', receiver.url('/cli-rolled-twice', HOOK_HOST)],
    );
    expect(created.code).toBe(0);
    const id = created.json.id as string;
    const first = await run('webhook', 'roll-secret', '--id', id, '--actor', owner, '--overlap', '1h');
    expect(first.json.accepted_secrets).toEqual([
      { which: 'new', until: null },
      { which: 'replaced', until: first.json.previous_secret_expires_at },
    ]);

    const refused = await run('webhook', 'roll-secret', '--id', id, '--actor', owner, '--overlap', '1h');
    expect(refused.code).not.toBe(0);
    expect(refused.error?.type).toBe('conflict');
    expect(refused.error?.message).toContain(`still accepted until ${first.json.previous_secret_expires_at}`);
    expect(refused.error?.message).toContain('--end-overlap');
    // Nothing changed: the secret the first roll replaced still signs until its time.
    expect(await storedSigningSecrets(database.current.db, id)).toMatchObject({
      current: first.json.secret,
      previous: created.json.secret,
    });

    const second = await run(
      'webhook',
      'roll-secret',
      '--id',
      id,
      '--actor',
      owner,
      '--overlap',
      '1h',
      '--end-overlap',
    );
    expect(second.code).toBe(0);
    expect(second.json.accepted_secrets).toEqual([
      { which: 'new', until: null },
      { which: 'replaced', until: second.json.previous_secret_expires_at },
    ]);
    expect(await storedSigningSecrets(database.current.db, id)).toMatchObject({
      current: second.json.secret,
      previous: first.json.secret,
    });
  });
});

describe('webhook end-overlap', () => {
  it('stops the replaced secret without rolling, as the operator in the log; again, changes nothing', async () => {
    const created = await run(
      ...['webhook', 'create', '--workspace', workspace, '--actor', owner, '--name', 'Overlap ended'],
      ...['--url', receiver.url('/cli-overlap-ended', HOOK_HOST)],
    );
    const id = created.json.id as string;
    const rolled = await run('webhook', 'roll-secret', '--id', id, '--actor', owner, '--overlap', '1h');
    expect((await run('webhook', 'end-overlap', '--id', id, '--actor', member)).error?.type).toBe('forbidden');

    const ended = await run('webhook', 'end-overlap', '--id', id, '--actor', owner);
    expect(ended.code).toBe(0);
    expect(ended.json).toEqual({
      id,
      previous_secret_expires_at: null,
      ended_overlap_until: rolled.json.previous_secret_expires_at,
    });
    expect(await storedSigningSecrets(database.current.db, id)).toMatchObject({
      current: rolled.json.secret,
      previous: null,
    });
    const again = await run('webhook', 'end-overlap', '--id', id, '--actor', owner);
    expect([again.code, again.json.ended_overlap_until]).toEqual([0, null]);
    expect(
      (await actionsOn(id)).filter((row) => row.action === 'webhook.secret_overlap_ended').map((row) => row.actor_type),
    ).toEqual(['operator']);
  });
});
