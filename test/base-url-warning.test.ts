import { describe, expect, it } from '@jest/globals';
import { redisKeyPrefix, runCli, runId, startService, TEST_REDIS_URL, useTestDatabase } from '@retention/testkit';

/**
 * A deployment (NODE_ENV=production) that kept a local BASE_URL (the compose file's default,
 * http://localhost:3000) links every customer and processor to localhost: `processor
 * connect`'s webhook_url, invitation and reset links. The API and the worker warn once at
 * start, naming BASE_URL, and the CLI after a command that printed such a link; not when
 * BASE_URL is public, and not outside production (a laptop's localhost is right).
 */

const database = useTestDatabase();
const WARNING = /BASE_URL is http:\/\/localhost:3000\/, a local address, with NODE_ENV=production/;

const SERVICES = [
  { name: 'api', entry: 'services/api/src/main.ts', started: /API listening/ },
  { name: 'worker', entry: 'services/worker/src/main.ts', started: /worker started/ },
];

async function startedOutput(entry: string, started: RegExp, env: Record<string, string>): Promise<string> {
  const service = startService(entry, {
    DATABASE_URL: database.current.url,
    REDIS_URL: TEST_REDIS_URL,
    REDIS_KEY_PREFIX: `${redisKeyPrefix(runId())}-base-url`,
    PORT: '0',
    WORKER_PORT: '0',
    BASE_URL: '',
    ...env,
  });
  try {
    await service.waitFor(started);
  } finally {
    await service.stop();
  }
  return service.output();
}

describe.each(SERVICES)('the $name with a local BASE_URL', ({ entry, started }) => {
  it('warns once at start in production, naming BASE_URL', async () => {
    const output = await startedOutput(entry, started, { NODE_ENV: 'production' });
    expect(output.match(new RegExp(WARNING.source, 'g'))).toHaveLength(1);
    const line = JSON.parse(output.split('\n').find((text) => WARNING.test(text))!) as Record<string, unknown>;
    expect(line).toMatchObject({ level: 'warn', variable: 'BASE_URL' });
  });

  it('says nothing with a public BASE_URL, or outside production', async () => {
    const publicUrl = await startedOutput(entry, started, {
      NODE_ENV: 'production',
      BASE_URL: 'https://retention.example.com',
    });
    expect(publicUrl).not.toContain('BASE_URL is');
    const laptop = await startedOutput(entry, started, { NODE_ENV: 'development' });
    expect(laptop).not.toContain('BASE_URL is');
  });
});

describe('the CLI with a local BASE_URL in production', () => {
  it('warns on stderr after a command that printed a link, in JSON; not after one that printed none', async () => {
    const env = { DATABASE_URL: database.current.url, NODE_ENV: 'production', BASE_URL: 'http://localhost:3000' };
    const workspace = await runCli(['workspace', 'create', '--name', 'Base URL'], env);
    expect(workspace.code).toBe(0);
    expect(workspace.stderr).toBe('');
    const user = await runCli(
      ['user', 'create', '--workspace', workspace.json.id, '--email', 'ann@example.com', '--role', 'owner'],
      env,
    );
    const reset = await runCli(['user', 'reset-link', '--id', user.json.id], env);
    expect(reset.code).toBe(0);
    expect(reset.json.reset_url).toMatch(/^http:\/\/localhost:3000\//);
    expect(JSON.parse(reset.stderr)).toEqual({ warning: expect.stringMatching(WARNING) });

    const publicUrl = await runCli(['user', 'reset-link', '--id', user.json.id], {
      ...env,
      BASE_URL: 'https://retention.example.com',
    });
    expect(publicUrl.code).toBe(0);
    expect(publicUrl.stderr).toBe('');
  });
});
