import { beforeAll, describe, expect, it } from '@jest/globals';
import { hashApiToken } from '@retention/core';
import {
  createEmptyDatabase,
  databaseUrl,
  runCli,
  TEST_POSTGRES_URL,
  testRedis,
  useTestDatabase,
} from '@retention/testkit';
import { createRedis, tokenEpochKey } from '@retention/runtime';
import { cli, cliWithEnv } from './helpers.js';

const database = useTestDatabase();
const run = (...args: string[]) => cli(database.current.url, ...args);

function withUser(user: string): string {
  const url = new URL(TEST_POSTGRES_URL);
  url.username = user;
  url.password = '';
  return url.toString();
}

const ISO_MILLIS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const UUID = /^[0-9a-f-]{36}$/;

describe('workspace commands', () => {
  it('creates a workspace with defaults and with every option', async () => {
    const plain = await run('workspace', 'create', '--name', 'Acme');
    expect(plain.code).toBe(0);
    expect(plain.json).toEqual({
      id: expect.stringMatching(UUID),
      object: 'workspace',
      name: 'Acme',
      processor: 'connected',
      display_currency: 'usd',
      created_at: expect.stringMatching(ISO_MILLIS),
    });
    const full = await run(
      'workspace',
      'create',
      '--name',
      'Globex',
      '--processor',
      'disconnected',
      '--display-currency',
      'EUR',
    );
    expect(full.json).toMatchObject({ processor: 'disconnected', display_currency: 'eur' });
  });

  it('updates the processor status and display currency', async () => {
    const { json: workspace } = await run('workspace', 'create', '--name', 'Initech');
    const updated = await run(
      'workspace',
      'update',
      '--id',
      workspace.id,
      '--processor',
      'disconnected',
      '--display-currency',
      'gbp',
    );
    expect(updated.json).toMatchObject({ id: workspace.id, processor: 'disconnected', display_currency: 'gbp' });
  });

  it.each([
    [
      ['workspace', 'create', '--name', 'X', '--processor', 'syncing'],
      /--processor must be one of connected, disconnected/,
    ],
    [
      ['workspace', 'create', '--name', 'X', '--display-currency', 'dollars'],
      /--display-currency must be a three-letter/,
    ],
    [['workspace', 'create', '--name', 'X', '--display-currency', 'xyz'], /no FX rate is known for "xyz"/],
    [['workspace', 'create', '--name', '   '], /--name must not be empty/],
    [['workspace', 'update', '--id', 'not-a-uuid', '--processor', 'connected'], /--id must be a UUID/],
  ])('refuses %j with invalid_param and exit 1', async (args, message) => {
    const result = await run(...args);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.error).toEqual({ type: 'invalid_param', message: expect.stringMatching(message) });
  });

  it('reports an unknown workspace as not_found', async () => {
    const result = await run(
      'workspace',
      'update',
      '--id',
      '00000000-0000-4000-8000-000000000000',
      '--processor',
      'connected',
    );
    expect(result).toMatchObject({ code: 1, error: { type: 'not_found' } });
  });

  it('refuses an update that changes nothing as a usage error naming the options', async () => {
    const { json: workspace } = await run('workspace', 'create', '--name', 'Hooli');
    expect(await run('workspace', 'update', '--id', workspace.id)).toMatchObject({
      code: 2,
      stdout: '',
      error: {
        type: 'invalid_param',
        message: expect.stringMatching(
          /^Give at least one of --name, --processor or --display-currency .* Usage: workspace update --id W/,
        ),
      },
    });
  });

  it('renames a workspace, and refuses a name with control characters', async () => {
    const { json: workspace } = await run('workspace', 'create', '--name', 'Pied');
    expect((await run('workspace', 'update', '--id', workspace.id, '--name', 'Pied Piper')).json.name).toBe(
      'Pied Piper',
    );
    expect(await run('workspace', 'update', '--id', workspace.id, '--name', 'Pied\u0000Piper')).toMatchObject({
      code: 1,
      error: { type: 'invalid_param', message: '--name must not contain control characters' },
    });
  });
});

describe('help', () => {
  it('lists every command with its usage', async () => {
    const result = await run('help');
    expect(result.code).toBe(0);
    expect(result.json.commands).toContainEqual({
      usage: 'token create --workspace W --name N [--rate-limit PER_MINUTE]',
      summary: expect.any(String),
    });
  });
});

describe('usage errors exit 2', () => {
  it.each([
    [[]],
    [['bogus']],
    [['workspace', 'explode']],
    [['workspace', 'create']],
    [['workspace', 'create', '--name']],
    [['workspace', 'create', '--name', 'A', '--colour', 'red']],
    [['workspace', 'create', '--name', 'A', '--name', 'B']],
    [['workspace', 'create', '--name', 'A', 'extra']],
    [['fixtures', 'load']],
  ])('%j', async (args) => {
    const result = await run(...args);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.error).toEqual({ type: 'invalid_param', message: expect.any(String) });
  });
});

describe('user commands', () => {
  let workspaceId: string;
  beforeAll(async () => {
    workspaceId = (await run('workspace', 'create', '--name', 'People')).json.id;
  });

  it('adds users with each role', async () => {
    for (const role of ['owner', 'admin', 'member']) {
      const result = await run(
        'user',
        'create',
        '--workspace',
        workspaceId,
        '--email',
        `${role}@people.test`,
        '--role',
        role,
      );
      expect(result.json).toEqual({
        id: expect.stringMatching(UUID),
        object: 'user',
        workspace_id: workspaceId,
        email: `${role}@people.test`,
        role,
        created_at: expect.stringMatching(ISO_MILLIS),
      });
    }
  });

  it('refuses a bad role, a bad email, a duplicate email and an unknown workspace', async () => {
    expect(
      (await run('user', 'create', '--workspace', workspaceId, '--email', 'x@people.test', '--role', 'root')).error
        ?.type,
    ).toBe('invalid_param');
    expect(
      (await run('user', 'create', '--workspace', workspaceId, '--email', 'nope', '--role', 'member')).error,
    ).toEqual({
      type: 'invalid_param',
      message: '--email must be an email address such as ann@example.com, got "nope"',
    });
    await run('user', 'create', '--workspace', workspaceId, '--email', 'dup@people.test', '--role', 'member');
    expect(
      (await run('user', 'create', '--workspace', workspaceId, '--email', 'DUP@people.test', '--role', 'admin')).error
        ?.type,
    ).toBe('conflict');
    expect(
      (
        await run(
          'user',
          'create',
          '--workspace',
          '00000000-0000-4000-8000-000000000000',
          '--email',
          'a@b.co',
          '--role',
          'member',
        )
      ).error?.type,
    ).toBe('not_found');
  });
});

describe('token commands', () => {
  let workspaceId: string;
  beforeAll(async () => {
    workspaceId = (await run('workspace', 'create', '--name', 'Tokens')).json.id;
  });

  it('mints a token whose value is shown once and stored only as its SHA-256', async () => {
    const created = await run('token', 'create', '--workspace', workspaceId, '--name', 'ci');
    expect(created.json).toEqual({
      id: expect.stringMatching(UUID),
      object: 'api_token',
      workspace_id: workspaceId,
      name: 'ci',
      token: expect.stringMatching(/^sk_live_[0-9A-Za-z]{32}$/),
      hint: created.json.token.slice(-4),
      rate_limit_per_minute: 60,
      created_at: expect.stringMatching(ISO_MILLIS),
      revoked_at: null,
      last_used_at: null,
    });
    const row = await database.current.db('api_tokens').where({ id: created.json.id }).first();
    expect(row.token_hash).toBe(hashApiToken(created.json.token));

    const listed = await run('token', 'list', '--workspace', workspaceId);
    expect(listed.json.object).toBe('list');
    expect(listed.json.data).toHaveLength(1);
    expect(listed.json.data[0]).not.toHaveProperty('token');
    expect(listed.stdout).not.toContain(created.json.token);
    expect(listed.stdout).not.toContain(created.json.token.slice(8));
  });

  it('creates with a raised limit, sets a new limit, and revokes idempotently', async () => {
    const created = await run('token', 'create', '--workspace', workspaceId, '--name', 'batch', '--rate-limit', '600');
    expect(created.json.rate_limit_per_minute).toBe(600);
    const limited = await run('token', 'set-limit', '--id', created.json.id, '--per-minute', '1200');
    expect(limited.json).toMatchObject({ id: created.json.id, rate_limit_per_minute: 1200 });
    expect(limited.json).not.toHaveProperty('token');
    // The limit it has already: the same answer, and no second "limit changed" in the log.
    const same = await run('token', 'set-limit', '--id', created.json.id, '--per-minute', '1200');
    expect(same.json).toMatchObject({ id: created.json.id, rate_limit_per_minute: 1200 });
    const logged = await database.current
      .db('security_events')
      .where({ target_id: created.json.id })
      .orderBy('created_at')
      .select('action', 'details');
    expect(logged).toEqual([
      { action: 'token.created', details: expect.anything() },
      { action: 'token.limit_changed', details: { from: 600, to: 1200 } },
    ]);

    const revoked = await run('token', 'revoke', '--id', created.json.id);
    expect(revoked.json.revoked_at).toMatch(ISO_MILLIS);
    const again = await run('token', 'revoke', '--id', created.json.id);
    expect(again.json.revoked_at).toBe(revoked.json.revoked_at);
  });

  it('announces each change to the API processes through the token epoch in Redis', async () => {
    const redis = createRedis(testRedis().REDIS_URL, 'blocking', 'cli-test');
    const epochKey = tokenEpochKey(testRedis().REDIS_KEY_PREFIX);
    try {
      const created = await run('token', 'create', '--workspace', workspaceId, '--name', 'epoch');
      const before = await redis.get(epochKey);
      await run('token', 'set-limit', '--id', created.json.id, '--per-minute', '90');
      const afterLimit = await redis.get(epochKey);
      expect(afterLimit).not.toBe(before);
      expect(afterLimit).toMatch(/^[A-Za-z0-9_-]{16}$/);
      await run('token', 'revoke', '--id', created.json.id);
      expect(await redis.get(epochKey)).not.toBe(afterLimit);
    } finally {
      redis.disconnect();
    }
  });

  it('says so, exit 1, when Redis cannot be told of a revocation, which is saved all the same', async () => {
    const created = await run('token', 'create', '--workspace', workspaceId, '--name', 'unannounced');
    const result = await cli(database.current.url, 'token', 'revoke', '--id', created.json.id);
    expect(result.code).toBe(0);
    const offline = await cliWithEnv(
      database.current.url,
      { REDIS_URL: 'redis://127.0.0.1:1' },
      'token',
      'set-limit',
      '--id',
      created.json.id,
      '--per-minute',
      '5',
    );
    expect(offline.code).toBe(1);
    expect(offline.error).toEqual({
      type: 'redis_error',
      message: expect.stringMatching(/Redis.*127\.0\.0\.1:1.*The change is saved.*up to 10 s/s),
    });
    const row = await database.current.db('api_tokens').where({ id: created.json.id }).first();
    expect(row.rate_limit_per_minute).toBe(5);
  });

  it.each([
    [['token', 'set-limit', '--id', '00000000-0000-4000-8000-000000000000', '--per-minute', '10'], 'not_found'],
    [['token', 'revoke', '--id', '00000000-0000-4000-8000-000000000000'], 'not_found'],
    [['token', 'revoke', '--id', 'abc'], 'invalid_param'],
    [['token', 'set-limit', '--id', '00000000-0000-4000-8000-000000000000', '--per-minute', '0'], 'invalid_param'],
    [['token', 'set-limit', '--id', '00000000-0000-4000-8000-000000000000', '--per-minute', '1.5'], 'invalid_param'],
    [['token', 'list', '--workspace', '00000000-0000-4000-8000-000000000000'], 'not_found'],
  ])('%j fails with %s', async (args, type) => {
    expect(await run(...args)).toMatchObject({ code: 1, error: { type } });
  });
});

describe('fx set', () => {
  it('sets and replaces a rate', async () => {
    expect((await run('fx', 'set', '--currency', 'EUR', '--per-usd', '0.9')).json).toEqual({
      object: 'fx_rate',
      currency: 'eur',
      per_usd: '0.9',
      updated_at: expect.stringMatching(ISO_MILLIS),
    });
    expect((await run('fx', 'set', '--currency', 'eur', '--per-usd', '0.95')).json.per_usd).toBe('0.95');
  });

  it('lets a workspace use a currency once it has a rate', async () => {
    expect((await run('workspace', 'create', '--name', 'X', '--display-currency', 'thb')).error?.type).toBe(
      'invalid_param',
    );
    await run('fx', 'set', '--currency', 'thb', '--per-usd', '36.5');
    expect((await run('workspace', 'create', '--name', 'X', '--display-currency', 'thb')).json.display_currency).toBe(
      'thb',
    );
  });

  it.each([['0'], ['-1'], ['abc'], ['1e5'], ['0.0'], ['1234567890123']])(
    'refuses the rate %s, naming --per-usd',
    async (rate) => {
      const result = await run('fx', 'set', '--currency', 'eur', '--per-usd', rate);
      expect(result).toMatchObject({
        code: 1,
        error: {
          type: 'invalid_param',
          message: expect.stringMatching(/^--per-usd must be a positive decimal number such as 0\.92 or 150/),
        },
      });
      expect(result.error!.message).not.toContain('^(?:');
    },
  );

  it('refuses to change the rate of usd', async () => {
    expect((await run('fx', 'set', '--currency', 'usd', '--per-usd', '2')).error?.type).toBe('invalid_param');
  });
});

describe('as a real process', () => {
  it('prints one JSON document on stdout and exits 0, or the error on stderr with exit 1 or 2', async () => {
    const env = { DATABASE_URL: database.current.url };
    const [ok, failed, usage] = await Promise.all([
      runCli(['workspace', 'create', '--name', 'Proc'], env),
      runCli(['token', 'revoke', '--id', '00000000-0000-4000-8000-000000000000'], env),
      runCli(['workspace', 'create'], env),
    ]);
    expect(ok).toMatchObject({ code: 0, stderr: '', json: { object: 'workspace', name: 'Proc' } });
    expect(failed).toMatchObject({ code: 1, stdout: '', error: { type: 'not_found' } });
    expect(usage).toMatchObject({ code: 2, stdout: '', error: { type: 'invalid_param' } });
  });

  it('names an invalid environment variable', async () => {
    const result = await runCli(['workspace', 'create', '--name', 'X'], {
      DATABASE_URL: database.current.url,
      STALE_CAMPAIGN_DAYS: 'soon',
    });
    expect(result.code).toBe(1);
    expect(result.error?.message).toContain('STALE_CAMPAIGN_DAYS');
  });

  it.each<[string, () => string, RegExp]>([
    [
      'a database that does not exist',
      () => databaseUrl('retention_cli_no_such_database'),
      /database "retention_cli_no_such_database" does not exist\); create and migrate it with `npm run migrate`/,
    ],
    [
      'a role that does not exist',
      () => withUser('retention_cli_no_such_role'),
      /role "retention_cli_no_such_role" does not exist\); create a role for your user with `sudo -u postgres createuser -s \$USER`, or set DATABASE_URL with a user and password/,
    ],
  ])('reports %s as database_error with what to do', async (_name, url, message) => {
    const result = await cli(url(), 'workspace', 'create', '--name', 'X');
    expect(result).toMatchObject({
      code: 1,
      error: { type: 'database_error', message: expect.stringMatching(message) },
    });
  });

  it('reports a database that was never migrated as database_error, without the SQL', async () => {
    const empty = await createEmptyDatabase();
    try {
      const result = await runCli(['token', 'list', '--workspace', '00000000-0000-4000-8000-000000000000'], {
        DATABASE_URL: empty.url,
      });
      expect(result).toMatchObject({ code: 1, error: { type: 'database_error' } });
      expect(result.error!.message).toContain('is not migrated (relation "workspaces" does not exist)');
      expect(result.error!.message).toContain('`npm run migrate`');
      expect(result.error!.message).not.toMatch(/select/i);
    } finally {
      await empty.drop();
    }
  });

  it('says which database it cannot reach', async () => {
    const result = await runCli(['workspace', 'create', '--name', 'X'], {
      DATABASE_URL: 'postgres://127.0.0.1:1/none',
    });
    expect(result).toMatchObject({ code: 1, error: { type: 'database_error' } });
    expect(result.error?.message).toMatch(/cannot reach PostgreSQL at postgres:\/\/([^@/]+@)?127\.0\.0\.1:1\/none/);
  });
});

describe('help flags', () => {
  const everyCommand = async () => (await run('help')).json as { commands: Array<{ usage: string }> };

  it.each([['--help'], ['-h']])('`cli %s` lists every command, as `cli help` does, and exits 0', async (flag) => {
    const result = await run(flag);
    expect(result.code).toBe(0);
    expect(result.stderr).toBe('');
    expect(result.json).toEqual(await everyCommand());
  });

  it.each([
    [['token', 'create', '--help']],
    [['token', 'create', '-h']],
    [['token', 'create', '--workspace', 'W', '--help']],
    [['token', 'create', '--name', '--help']],
  ])('`cli %j` prints that command’s usage and summary and exits 0, touching nothing', async (args) => {
    // No database either: help needs none.
    const result = await cli('postgres://postgres@127.0.0.1:1/nowhere', ...args);
    expect(result.code).toBe(0);
    expect(result.stderr).toBe('');
    expect(result.json).toEqual({
      usage: 'token create --workspace W --name N [--rate-limit PER_MINUTE]',
      summary: expect.any(String),
    });
  });

  it.each([['--help'], ['-h']])('`cli token %s` lists the token commands and exits 0', async (flag) => {
    const result = await run('token', flag);
    expect(result.code).toBe(0);
    const usages = (result.json as { commands: Array<{ usage: string }> }).commands.map((command) => command.usage);
    expect(usages.length).toBeGreaterThan(1);
    expect(usages.every((usage) => usage.startsWith('token '))).toBe(true);
  });

  it('keeps a value that merely starts with a dash a value', async () => {
    // `--name -h` is a name, as `--amount -5` reaches its parser: only a bare flag asks for help.
    const result = await run('workspace', 'create', '--name', '-h');
    expect(result.code).toBe(0);
    expect(result.json.name).toBe('-h');
  });
});
