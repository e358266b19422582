import { describe, expect, it } from '@jest/globals';
import { freePort, redisKeyPrefix, runId, startService, TEST_REDIS_URL, useTestDatabase } from '@retention/testkit';

/**
 * What the processes say when PostgreSQL or Redis is not there at start. On a laptop (any
 * NODE_ENV but production) the hint to start both with the dev compose file helps; in a
 * deployment (NODE_ENV=production, the images) it is the wrong advice: there the line names
 * the service, its address and the variable that set it, and nothing else.
 */

const database = useTestDatabase();
const COMPOSE_HINT = 'docker compose -f docker-compose.yml -f infra/docker/compose.dev.yml';

interface Case {
  name: string;
  entry: string;
  absent: 'PostgreSQL' | 'Redis';
  failure: string;
}

const CASES: Case[] = [
  { name: 'api', entry: 'services/api/src/main.ts', absent: 'PostgreSQL', failure: 'api failed to start: ' },
  { name: 'api', entry: 'services/api/src/main.ts', absent: 'Redis', failure: 'api failed to start: ' },
  { name: 'worker', entry: 'services/worker/src/main.ts', absent: 'PostgreSQL', failure: 'worker failed to start: ' },
  { name: 'worker', entry: 'services/worker/src/main.ts', absent: 'Redis', failure: 'worker failed to start: ' },
  { name: 'migrate', entry: 'packages/db/src/migrate-cli.ts', absent: 'PostgreSQL', failure: 'migrate failed: ' },
];

async function run(entry: string, absent: Case['absent'], nodeEnv: string) {
  // Nobody listens there; the URL carries a password that must never be printed.
  const port = await freePort();
  const env =
    absent === 'PostgreSQL'
      ? { DATABASE_URL: `postgres://ann:pw-never-printed@127.0.0.1:${port}/retention`, REDIS_URL: TEST_REDIS_URL }
      : { DATABASE_URL: database.current.url, REDIS_URL: `redis://:pw-never-printed@127.0.0.1:${port}` };
  const process = startService(entry, {
    ...env,
    NODE_ENV: nodeEnv,
    REDIS_KEY_PREFIX: `${redisKeyPrefix(runId())}-hints`,
    PORT: '0',
    WORKER_PORT: '0',
  });
  const code = await process.exited;
  return { code, output: process.output(), port, variable: absent === 'PostgreSQL' ? 'DATABASE_URL' : 'REDIS_URL' };
}

describe.each(CASES)('$name with $absent absent', ({ entry, absent, failure }) => {
  it('in production names the service, its address and its variable, without the laptop hint', async () => {
    const { code, output, port, variable } = await run(entry, absent, 'production');
    expect(code).toBe(1);
    expect(output).toContain(`${failure}cannot reach ${absent} at `);
    expect(output).toContain(`127.0.0.1:${port}`);
    expect(output).toContain(`set by ${variable}.`);
    expect(output).not.toContain('docker compose');
    expect(output).not.toContain('install your distribution');
    expect(output).not.toContain('pw-never-printed');
  });

  it('elsewhere gives the hint to start it with the dev compose file', async () => {
    const { code, output } = await run(entry, absent, 'development');
    expect(code).toBe(1);
    expect(output).toContain(`${failure}cannot reach ${absent} at `);
    expect(output).toContain(COMPOSE_HINT);
    expect(output).not.toContain('pw-never-printed');
  });
});
