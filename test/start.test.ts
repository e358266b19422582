import { execFile } from 'node:child_process';
import { createServer } from 'node:net';
import { promisify } from 'node:util';
import { describe, expect, it } from '@jest/globals';
import { createEmptyDatabase, freePort, redisKeyPrefix, runId, startService, TEST_REDIS_URL } from '@retention/testkit';
import { npmRun } from './npm-run.js';

const exec = promisify(execFile);

/**
 * `npm start` as a newcomer runs it, on a database that does not exist yet. No BASE_URL: the
 * URLs it prints must follow PORT by themselves.
 */
function environment(databaseUrl: string, port: number, workerPort: number): Record<string, string> {
  return {
    DATABASE_URL: databaseUrl,
    REDIS_URL: TEST_REDIS_URL,
    REDIS_KEY_PREFIX: `${redisKeyPrefix(runId())}-start`,
    PORT: String(port),
    WORKER_PORT: String(workerPort),
    API_INTERNAL_PORT: '0',
    BASE_URL: '', // blank counts as unset, whatever the test run's own environment says
  };
}

/** True when something answers HTTP on the port. */
const answers = (port: number) =>
  fetch(`http://127.0.0.1:${port}/healthz`, { signal: AbortSignal.timeout(2_000) }).then(
    () => true,
    () => false,
  );

/** Runs `test` on a database that does not exist yet, dropped afterwards whatever happens. */
async function withEmptyDatabase(test: (database: Awaited<ReturnType<typeof createEmptyDatabase>>) => Promise<void>) {
  const database = await createEmptyDatabase();
  try {
    await test(database);
  } finally {
    await database.drop();
  }
}

/** The printed token reads the demo data through the API on `port`. */
async function expectTokenWorks(port: number, token: string | undefined): Promise<void> {
  const response = await fetch(`http://127.0.0.1:${port}/api/v1/campaigns?status=in_flight`, {
    headers: { authorization: `Bearer ${token}` },
  });
  expect(response.status).toBe(200);
}

const printedToken = (output: string) => /API token \(shown this once\): (sk_live_\w+)/.exec(output)?.[1];
const printedCurl = (output: string) => /Try it: {2}(curl .*)/.exec(output)?.[1] ?? '';

describe('npm start', () => {
  it('migrates, seeds the demo on the first start only, and prints a URL on its PORT and a curl line that works', async () => {
    await withEmptyDatabase(async (database) => {
      const port = await freePort();
      const workerPort = await freePort();
      let firstInvitation = '';
      const first = npmRun('start', environment(database.url, port, workerPort));
      try {
        await first.waitFor(/Stop it with Ctrl-C/, 90_000);
        const base = `http://localhost:${port}`;
        expect(first.output()).toContain(`The service is running: API ${base}/api/v1, reference ${base}/docs`);
        const token = printedToken(first.output());
        expect(token).toBeDefined();
        const curl = printedCurl(first.output());
        expect(curl).toContain(`Authorization: Bearer ${token}`);
        expect(curl).toContain(`'${base}/api/v1/campaigns?status=in_flight'`);
        // The line itself, pasted into a shell.
        const { stdout } = await exec('sh', ['-c', curl]);
        const body = JSON.parse(stdout) as { data: Array<{ status: string }> };
        expect(body.data.length).toBeGreaterThan(0);
        expect(body.data.every((campaign) => campaign.status === 'in_flight')).toBe(true);

        // The demo workspace's id, which the README's Stripe recipe asks for.
        const seeded = /Seeded the demo workspace "[^"]+" \(([0-9a-f-]{36}), \d+ customers\)/.exec(first.output());
        expect(seeded).not.toBeNull();
        expect(await database.db('workspaces').where({ id: seeded![1] }).first()).toMatchObject({
          name: 'Northwind Analytics (demo)',
        });

        // The dashboard, and an invitation link for the demo owner that the dashboard API knows.
        expect(first.output()).toContain(`Dashboard: ${base}/dashboard/`);
        firstInvitation = printedInvitation(first.output(), base);
        const invitation = await fetch(`${base}/dashboard/api/invitations/${firstInvitation}`);
        expect(invitation.status).toBe(200);
        expect(await invitation.json()).toMatchObject({ role: 'owner' });

        // SIGTERM to npm alone, as a supervisor sends it: the services stop with it, npm exits 0.
        first.terminate();
        expect(await first.exited).toBe(0);
        expect([await answers(port), await answers(workerPort)]).toEqual([false, false]);
      } finally {
        first.cleanUp();
      }

      const second = npmRun('start', environment(database.url, port, workerPort));
      try {
        await second.waitFor(/Stop it with Ctrl-C/, 90_000);
        expect(second.output()).toContain('0 migration(s) applied');
        expect(second.output()).toMatch(/already exists; demo data is seeded on the first start only/);
        expect(second.output()).not.toMatch(/sk_live_/);
        // A fresh link on every start; the previous one no longer works.
        const secondInvitation = printedInvitation(second.output(), `http://localhost:${port}`);
        expect(secondInvitation).not.toBe(firstInvitation);
        const base = `http://localhost:${port}`;
        expect((await fetch(`${base}/dashboard/api/invitations/${firstInvitation}`)).status).toBe(404);
        expect((await fetch(`${base}/dashboard/api/invitations/${secondInvitation}`)).status).toBe(200);
        // Ctrl-C in the terminal: SIGINT to the whole group; npm exits 0, not 130.
        second.interrupt();
        expect(await second.exited).toBe(0);
        expect([await answers(port), await answers(workerPort)]).toEqual([false, false]);
      } finally {
        second.cleanUp();
      }
      expect(await database.db('workspaces').select('id')).toHaveLength(1);
    });
  }, 200_000);

  it('with PORT and WORKER_PORT 0, picks free ports, checks them, and prints them with the token', async () => {
    await withEmptyDatabase(async (database) => {
      const start = startService('scripts/start.ts', environment(database.url, 0, 0));
      try {
        await start.waitFor(/Stop it with Ctrl-C/, 90_000);
        const apiPort = Number(
          /The service is running: API http:\/\/localhost:(\d+)\/api\/v1/.exec(start.output())?.[1],
        );
        const workerPort = Number(
          /Worker health and metrics: http:\/\/localhost:(\d+)\/readyz/.exec(start.output())?.[1],
        );
        expect(apiPort).toBeGreaterThan(0);
        expect(workerPort).toBeGreaterThan(0);
        expect(workerPort).not.toBe(apiPort);
        expect((await fetch(`http://127.0.0.1:${workerPort}/readyz`)).status).toBe(200);
        const internalPort = Number(
          /API health and metrics: http:\/\/localhost:(\d+)\/readyz/.exec(start.output())?.[1],
        );
        expect(internalPort).toBeGreaterThan(0);
        expect((await fetch(`http://127.0.0.1:${internalPort}/readyz`)).status).toBe(200);
        const token = printedToken(start.output());
        await expectTokenWorks(apiPort, token);
      } finally {
        expect(await start.stop('SIGTERM')).toBe(0);
      }
    });
  }, 120_000);

  it('prints the token with a warning when the services are not ready in time, rather than losing it', async () => {
    await withEmptyDatabase(async (database) => {
      const port = await freePort();
      const start = startService('scripts/start.ts', {
        ...environment(database.url, port, await freePort()),
        START_READY_TIMEOUT: '1ms',
      });
      try {
        await start.waitFor(/Stop it with Ctrl-C/, 90_000);
        expect(start.output()).toMatch(
          /Warning: the API \(port \d+\) and the worker \(port \d+\) did not answer \/readyz/,
        );
        expect(start.output()).not.toContain('The service is running');
        const token = printedToken(start.output());
        expect(token).toBeDefined();
        // The token works once the API is up.
        await start.waitFor(/API listening/);
        await expectTokenWorks(port, token);
      } finally {
        expect(await start.stop('SIGTERM')).toBe(0);
      }
    });
  }, 120_000);

  it('fails at once when its port is taken, and seeds nothing so the next start shows a token', async () => {
    const blocker = createServer();
    await withEmptyDatabase(async (database) => {
      try {
        const port = await freePort();
        await new Promise<void>((resolve) => blocker.listen(port, resolve));
        const started = Date.now();
        const workerPort = await freePort();
        const start = startService('scripts/start.ts', environment(database.url, port, workerPort));
        expect(await start.exited).toBe(1);
        expect(Date.now() - started).toBeLessThan(20_000);
        expect(start.output()).toContain(`cannot listen on PORT ${port}`);
        expect(start.output()).not.toMatch(/sk_live_|Stop it with Ctrl-C/);
        expect(await answers(workerPort)).toBe(false);
        expect(await database.db('workspaces').select('id')).toHaveLength(0);
      } finally {
        blocker.close();
      }
    });
  }, 60_000);

  it('names the backing service it cannot reach and how to start it, without a stack trace', async () => {
    await withEmptyDatabase(async (database) => {
      const unreachable = {
        Redis: { REDIS_URL: 'redis://127.0.0.1:1' },
        PostgreSQL: { DATABASE_URL: 'postgres://retention@127.0.0.1:1/retention' },
      };
      for (const [service, override] of Object.entries(unreachable)) {
        const start = startService('scripts/start.ts', {
          ...environment(database.url, await freePort(), await freePort()),
          ...override,
        });
        expect(await start.exited).toBe(1);
        expect(start.output()).toContain(`cannot reach ${service} at ${Object.values(override)[0]}`);
        expect(start.output()).toContain('up -d postgres redis');
        expect(start.output()).not.toMatch(/\n\s+at /);
      }
    });
  });
});

/** The token of the demo owner's invitation link that `npm start` printed. */
function printedInvitation(output: string, base: string): string {
  const match = new RegExp(`${base.replace(/[.:/]/g, '\\$&')}/dashboard/invite/([A-Za-z0-9_-]{43})`).exec(output);
  if (!match) throw new Error(`no invitation link in:\n${output}`);
  return match[1]!;
}
