import { execFile } from 'node:child_process';
import { createServer as createHttpServer } from 'node:http';
import { connect, createServer } from 'node:net';
import { promisify } from 'node:util';
import { describe, expect, it } from '@jest/globals';
import type { Db } from '@retention/db';
import { createEndpoint, recoverCampaign } from '@retention/domain';
import {
  eventually,
  freePort,
  redisKeyPrefix,
  REPO_ROOT,
  runId,
  startService,
  TEST_REDIS_URL,
  testSecretsKeyBytes,
  withEmptyDatabase,
  withTestDatabase,
} from '@retention/testkit';
import { npmRun } from './npm-run.js';

const exec = promisify(execFile);

/**
 * `npm start` as a newcomer runs it. No BASE_URL: the URLs it prints must follow PORT by
 * themselves. The first test starts on an empty database, which it migrates; the tests of one
 * setting each start on a migrated one (a clone of the run's template: seconds less each), where
 * the first start still seeds the demo and prints its token.
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
    WEBHOOK_ALLOW_PRIVATE_NETWORKS: '',
  };
}

/** True when something answers HTTP on the port. */
const answers = (port: number) =>
  fetch(`http://127.0.0.1:${port}/healthz`, { signal: AbortSignal.timeout(2_000) }).then(
    () => true,
    () => false,
  );

/** The printed token reads the demo data through the API on `port`. */
async function expectTokenWorks(port: number, token: string | undefined): Promise<void> {
  const response = await fetch(`http://127.0.0.1:${port}/api/v1/campaigns?status=in_flight`, {
    headers: { authorization: `Bearer ${token}` },
  });
  expect(response.status).toBe(200);
}

/** True when something accepts a TCP connection on the port (the demo receiver speaks TLS only). */
const listening = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });

/** The demo receiver's origin that `npm start` printed. */
function printedReceiver(output: string): string {
  const origin = /Demo webhook receiver: (https:\/\/127\.0\.0\.1:\d+)/.exec(output)?.[1];
  if (!origin) throw new Error(`no demo receiver in:\n${output}`);
  return origin;
}

/**
 * A new event in the demo workspace (an in-flight campaign recovered, which both demo
 * endpoints subscribe to), and the first attempt of each of its deliveries once the worker
 * has made them, as the delivery log has it.
 */
async function deliveriesOfNewEvent(db: Db, workspaceId: string) {
  const campaign = await db('recovery_campaigns')
    .where({ workspace_id: workspaceId, status: 'in_flight' })
    .first<{ id: string }>('id');
  await recoverCampaign(db, { id: campaign.id, via: 'spontaneous' });
  return eventually(
    async () => {
      const attempts = await db('webhook_attempts as a')
        .join('webhook_deliveries as d', 'd.id', 'a.delivery_id')
        .join('events as e', 'e.id', 'd.event_id')
        .join('webhook_endpoints as w', 'w.id', 'd.endpoint_id')
        .whereRaw("e.data ->> 'campaign_id' = ?", [campaign.id])
        .where({ 'e.type': 'recovery.recovered', 'a.attempt': 1 })
        .orderBy('w.name')
        .select('w.name', 'w.url', 'd.status', 'a.outcome', 'a.http_status', 'a.error', 'a.response_body');
      return attempts.length === 2 && attempts;
    },
    30_000,
    100,
  );
}

/**
 * An endpoint a developer adds on the demo receiver, as its banner line suggests ("an endpoint
 * you add at …/mine"): subscribed to cancel.saved alone, so the demo endpoints' deliveries of a
 * new recovery (deliveriesOfNewEvent) are still the only ones.
 */
async function addMine(db: Db, workspaceId: string, receiver: string): Promise<string> {
  const owner = await db('users').where({ workspace_id: workspaceId, role: 'owner' }).first<{ id: string }>('id');
  const created = await createEndpoint(db, testSecretsKeyBytes(), {
    workspace_id: workspaceId,
    actor_id: owner.id,
    name: 'Mine',
    url: `${receiver}/mine`,
    events: ['cancel.saved'],
    allow_private_networks: true,
  });
  return created.id;
}

/** Every endpoint's URL by its name. */
const endpointUrls = async (db: Db) =>
  Object.fromEntries(
    (await db('webhook_endpoints').select('name', 'url')).map((row: { name: string; url: string }) => [
      row.name,
      row.url,
    ]),
  );

const printedToken = (output: string) => /API token \(shown this once\): (sk_live_\w+)/.exec(output)?.[1];
const printedCurl = (output: string) => /Try it: {2}(curl .*)/.exec(output)?.[1] ?? '';

describe('npm start', () => {
  it('migrates, seeds the demo on the first start only, and prints a URL on its PORT and a curl line that works', async () => {
    await withEmptyDatabase(async (database) => {
      const port = await freePort();
      const workerPort = await freePort();
      let firstInvitation = '';
      let receiver = '';
      let workspaceId = '';
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
        // Its token and endpoints are in the security log, made by npm start, as the Tokens page says.
        expect(
          await database
            .db('security_events')
            .whereIn('action', ['token.created', 'webhook.created'])
            .orderBy('action')
            .select('action', 'actor_type', 'actor_label'),
        ).toEqual([
          { action: 'token.created', actor_type: 'system', actor_label: 'Demo setup' },
          { action: 'webhook.created', actor_type: 'system', actor_label: 'Demo setup' },
          { action: 'webhook.created', actor_type: 'system', actor_label: 'Demo setup' },
        ]);

        // The dashboard, and an invitation link for the demo owner that the dashboard API knows.
        expect(first.output()).toContain(`Dashboard: ${base}/dashboard/`);
        // The dashboard's page itself, built and served (not the "has not been built" page).
        const dashboardPage = await fetch(`${base}/dashboard/`);
        expect(dashboardPage.status).toBe(200);
        expect(await dashboardPage.text()).toContain('<div id="root">');
        firstInvitation = printedInvitation(first.output(), base);
        const invitation = await fetch(`${base}/dashboard/api/invitations/${firstInvitation}`);
        expect(invitation.status).toBe(200);
        expect(await invitation.json()).toMatchObject({ role: 'owner' });

        // The demo's webhook endpoints answer: a new event is delivered to both, at the first attempt.
        expect(first.output()).toContain('WEBHOOK_ALLOW_PRIVATE_NETWORKS is not set: true for npm start');
        receiver = printedReceiver(first.output());
        expect(await deliveriesOfNewEvent(database.db, seeded![1]!)).toEqual(delivered(receiver));
        workspaceId = seeded![1]!;
        // The first start already says how to run the operator CLI against this service: run as
        // printed, with none of the test run's own settings, its links name this start's PORT.
        // (with DATABASE_URL, whose password is not printed, set as when starting)
        const prefix =
          /Operator CLI for this service( \(with DATABASE_URL[^)]*\))?:\n {2}(.*)npm run --silent cli -- <command>\n/.exec(
            first.output(),
          );
        expect(prefix?.[2]).toContain(`BASE_URL=http://localhost:${port} `);
        const { DATABASE_URL: _db, REDIS_KEY_PREFIX: _rp, BASE_URL: _base, ...ownEnvironment } = process.env;
        const status = await exec(
          'sh',
          ['-c', `${prefix![2]}npm run --silent cli -- processor status --workspace ${workspaceId}`],
          { cwd: REPO_ROOT, env: { ...ownEnvironment, DATABASE_URL: database.url } },
        );
        expect(JSON.parse(status.stdout)).toMatchObject({
          webhook_url: expect.stringMatching(new RegExp(`^http://localhost:${port}/processor/stripe/`)),
        });

        // The receiver's URL says a newcomer's own endpoint on any path of it is answered too,
        // and one is added there.
        expect(first.output()).toContain(
          `a POST on any other path, e.g. an endpoint you add at ${receiver}/mine, is answered 200`,
        );
        expect(first.output()).toContain('the next start listens on this port again');
        await addMine(database.db, workspaceId, receiver);

        // SIGTERM to npm alone, as a supervisor sends it: the services stop with it, npm exits 0.
        first.terminate();
        expect(await first.exited).toBe(0);
        expect([await answers(port), await answers(workerPort)]).toEqual([false, false]);
        expect(await listening(Number(new URL(receiver).port))).toBe(false);
      } finally {
        first.cleanUp();
      }

      // The same database through a URL with a password (trust authentication ignores it).
      const withPassword = new URL(database.url);
      withPassword.password = 'start-hint-secret';
      const secondEnvironment = environment(withPassword.toString(), port, workerPort);
      const second = npmRun('start', secondEnvironment);
      try {
        await second.waitFor(/Stop it with Ctrl-C/, 90_000);
        expect(second.output()).toContain('0 migration(s) applied');
        expect(second.output()).toMatch(/already exists; demo data is seeded on the first start only/);
        expect(second.output()).not.toMatch(/sk_live_/);
        expect(second.output()).not.toContain('start-hint-secret');

        // The token hint, run as printed: with this start's REDIS_KEY_PREFIX and BASE_URL (its PORT) in the line, and
        // DATABASE_URL (which holds a password, so is not printed) set as when starting.
        expect(second.output()).toMatch(
          new RegExp(
            `Operator CLI for this service \\(with DATABASE_URL( and SECRETS_KEY)? set as when starting: secrets are not printed\\):\\n` +
              ` {2}REDIS_KEY_PREFIX=${secondEnvironment.REDIS_KEY_PREFIX} BASE_URL=http://localhost:${port} npm run --silent cli -- <command>\\n`,
          ),
        );
        const hint = /Mint one for it with([^\n]*):\n {2}(.+)/.exec(second.output());
        // (SECRETS_KEY too when the test run sets one: the CLI would use the development key otherwise)
        expect(hint?.[1]).toMatch(
          /^ \(with DATABASE_URL( and SECRETS_KEY)? set as when starting: secrets are not printed\)$/,
        );
        expect(hint?.[2]).toMatch(
          new RegExp(
            `^REDIS_KEY_PREFIX=${secondEnvironment.REDIS_KEY_PREFIX} BASE_URL=http://localhost:${port} ` +
              'npm run --silent cli -- token create ',
          ),
        );
        const { DATABASE_URL: _database, REDIS_KEY_PREFIX: _prefix, ...otherEnvironment } = process.env;
        const minted = await exec('sh', ['-c', hint![2]!], {
          cwd: REPO_ROOT,
          env: { ...otherEnvironment, DATABASE_URL: secondEnvironment.DATABASE_URL },
        });
        expect(JSON.parse(minted.stdout)).toMatchObject({ token: expect.stringMatching(/^sk_live_/) });
        expect(await database.db('api_tokens').where({ name: 'laptop' })).toHaveLength(1);
        // A fresh link on every start; the previous one no longer works.
        const secondInvitation = printedInvitation(second.output(), `http://localhost:${port}`);
        expect(secondInvitation).not.toBe(firstInvitation);
        const base = `http://localhost:${port}`;
        expect((await fetch(`${base}/dashboard/api/invitations/${firstInvitation}`)).status).toBe(404);
        expect((await fetch(`${base}/dashboard/api/invitations/${secondInvitation}`)).status).toBe(200);

        // The receiver is on the same port again: nothing was repointed, nothing written to the
        // security log, and the worker's deliveries and the dashboard's Send test (the API's
        // own) arrive, to the demo's endpoints and to the one added on the receiver alike.
        expect(printedReceiver(second.output())).toBe(receiver);
        expect(second.output()).not.toContain('port of the last start');
        expect(await endpointUrls(database.db)).toEqual({
          'Dunning emails': `${receiver}/demo/dunning`,
          CRM: `${receiver}/demo/crm`,
          Mine: `${receiver}/mine`,
        });
        expect(await database.db('security_events').where({ action: 'webhook.updated' })).toEqual([]);
        expect(await deliveriesOfNewEvent(database.db, workspaceId)).toEqual(delivered(receiver));
        const accepted = await fetch(`${base}/dashboard/api/invitations/${secondInvitation}/accept`, {
          method: 'POST',
          headers: { origin: base, 'content-type': 'application/json' },
          body: JSON.stringify({ name: 'Demo Owner', password: 'correct horse battery' }),
        });
        expect(accepted.status).toBe(200);
        const cookie = accepted.headers.get('set-cookie')!.split(';')[0]!;
        const dunning = await database
          .db('webhook_endpoints')
          .where({ name: 'Dunning emails' })
          .first<{ id: string }>();
        const test = await fetch(`${base}/dashboard/api/webhooks/${dunning.id}/test`, {
          method: 'POST',
          headers: { origin: base, cookie },
        });
        expect(await test.json()).toMatchObject({ http_status: 200, error: null, response_body: '{"queued":true}' });
        const mine = await database.db('webhook_endpoints').where({ name: 'Mine' }).first<{ id: string }>();
        const mineTest = await fetch(`${base}/dashboard/api/webhooks/${mine.id}/test`, {
          method: 'POST',
          headers: { origin: base, cookie },
        });
        expect(await mineTest.json()).toMatchObject({
          http_status: 200,
          error: null,
          response_body: '{"received":true}',
        });
        // The operator CLI's own webhook test, from a process of its own, with what the banner says it needs.
        const cliEnvironment =
          /the CLI's webhook test and webhook resend, .* reach it with\n {2}(WEBHOOK_ALLOW_PRIVATE_NETWORKS=true) (NODE_EXTRA_CA_CERTS=\S+)\)/
            .exec(second.output())
            ?.slice(1)
            .map((setting) => setting.split('=') as [string, string]);
        expect(cliEnvironment).toHaveLength(2);
        const owner = await database.db('users').where({ email: 'owner@northwind.example' }).first<{ id: string }>();
        const cli = await exec(
          'npm',
          ['run', '--silent', 'cli', '--', 'webhook', 'test', '--id', dunning.id, '--actor', owner.id],
          {
            cwd: REPO_ROOT,
            env: { ...process.env, DATABASE_URL: database.url, ...Object.fromEntries(cliEnvironment!) },
          },
        );
        expect(JSON.parse(cli.stdout)).toMatchObject({ outcome: 'succeeded', http_status: 200 });
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

  it('moves every endpoint on the receiver to its new port when the last one is taken, and logs each move once', async () => {
    await withTestDatabase(async (database) => {
      const settings = { ...environment(database.url, await freePort(), await freePort()), DEMO_CUSTOMERS: '10' };
      const first = startService('scripts/start.ts', settings);
      let receiver = '';
      let workspaceId = '';
      try {
        await first.waitFor(/Stop it with Ctrl-C/, 90_000);
        receiver = printedReceiver(first.output());
        workspaceId = (await database.db('workspaces').first<{ id: string }>('id')).id;
        await addMine(database.db, workspaceId, receiver);
      } finally {
        expect(await first.stop('SIGTERM')).toBe(0);
      }

      // Another npm start's receiver (or anything else) has the port meanwhile.
      const blocker = createServer();
      await new Promise<void>((resolve) => blocker.listen(Number(new URL(receiver).port), '127.0.0.1', resolve));
      let moved = '';
      try {
        const second = startService('scripts/start.ts', settings);
        try {
          await second.waitFor(/Stop it with Ctrl-C/, 90_000);
          moved = printedReceiver(second.output());
          expect(moved).not.toBe(receiver);
          expect(second.output()).toContain(
            `The demo webhook receiver's port of the last start (${new URL(receiver).port}) is taken: it listens on ` +
              `${new URL(moved).port} now, and 3 endpoints on ${receiver} now point there`,
          );
          expect(await endpointUrls(database.db)).toEqual({
            'Dunning emails': `${moved}/demo/dunning`,
            CRM: `${moved}/demo/crm`,
            Mine: `${moved}/mine`,
          });
          expect(await deliveriesOfNewEvent(database.db, workspaceId)).toEqual(delivered(moved));
        } finally {
          expect(await second.stop('SIGTERM')).toBe(0);
        }
      } finally {
        await new Promise((resolve) => blocker.close(resolve));
      }
      const moves = () =>
        database
          .db('security_events')
          .where({ action: 'webhook.updated' })
          .orderBy('target_label')
          .select('actor_type', 'actor_label', 'details');
      expect(await moves()).toEqual(
        ['/demo/crm', '/demo/dunning', '/mine'].map((path) => ({
          actor_type: 'system',
          actor_label: 'Demo setup',
          details: { url: { from: `${receiver}${path}`, to: `${moved}${path}` } },
        })),
      );

      // The new port is the one remembered: the next start takes it again and moves nothing.
      const third = startService('scripts/start.ts', settings);
      try {
        await third.waitFor(/Stop it with Ctrl-C/, 90_000);
        expect(printedReceiver(third.output())).toBe(moved);
        expect(third.output()).not.toContain('port of the last start');
      } finally {
        expect(await third.stop('SIGTERM')).toBe(0);
      }
      expect(await moves()).toHaveLength(3);
    });
  }, 200_000);

  it('with PORT and WORKER_PORT 0, picks free ports, checks them, and prints them with the token', async () => {
    await withTestDatabase(async (database) => {
      // The smallest demo that holds every status (DEMO_CUSTOMERS): this start is about its ports.
      const start = startService('scripts/start.ts', { ...environment(database.url, 0, 0), DEMO_CUSTOMERS: '10' });
      try {
        await start.waitFor(/Stop it with Ctrl-C/, 90_000);
        expect(start.output()).toMatch(/Seeded the demo workspace "[^"]+" \([0-9a-f-]{36}, 10 customers\)/);
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

  it('honours an explicit WEBHOOK_ALLOW_PRIVATE_NETWORKS=false: deliveries to the demo receiver are refused', async () => {
    await withTestDatabase(async (database) => {
      const start = startService('scripts/start.ts', {
        ...environment(database.url, await freePort(), await freePort()),
        WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'false',
        DEMO_CUSTOMERS: '10',
      });
      try {
        await start.waitFor(/Stop it with Ctrl-C/, 90_000);
        expect(start.output()).not.toContain('WEBHOOK_ALLOW_PRIVATE_NETWORKS is not set');
        expect(start.output()).toMatch(/WEBHOOK_ALLOW_PRIVATE_NETWORKS=false refuses loopback addresses/);
        const receiver = printedReceiver(start.output());
        const workspace = await database.db('workspaces').first<{ id: string }>('id');
        const refused = `refused: 127.0.0.1 is a loopback address; receivers must be on the public internet`;
        expect(await deliveriesOfNewEvent(database.db, workspace.id)).toEqual(
          delivered(receiver).map((attempt) => ({
            ...attempt,
            status: 'pending', // retried later, and refused again
            outcome: 'failed',
            http_status: null,
            error: expect.stringContaining(refused),
            response_body: null,
          })),
        );
      } finally {
        expect(await start.stop('SIGTERM')).toBe(0);
      }
    });
  }, 120_000);

  it('prints the token with a warning when the services are not ready in time, rather than losing it', async () => {
    await withTestDatabase(async (database) => {
      const port = await freePort();
      const start = startService('scripts/start.ts', {
        ...environment(database.url, port, await freePort()),
        START_READY_TIMEOUT: '1ms',
        DEMO_CUSTOMERS: '10',
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
        // Refused before anything was done: not even migrated.
        await expect(database.db.schema.hasTable('workspaces')).resolves.toBe(false);
      } finally {
        blocker.close();
      }
    });
  }, 60_000);

  it('refuses a DEMO_CUSTOMERS it cannot make before touching anything', async () => {
    await withEmptyDatabase(async (database) => {
      for (const customers of ['lots', '9']) {
        const start = startService('scripts/start.ts', {
          ...environment(database.url, await freePort(), await freePort()),
          DEMO_CUSTOMERS: customers,
        });
        expect(await start.exited).toBe(1);
        expect(start.output()).toContain(
          `npm start failed: Invalid DEMO_CUSTOMERS: "${customers}" is not a whole number from 10 to 100000`,
        );
      }
      await expect(database.db.schema.hasTable('workspaces')).resolves.toBe(false);
    });
  }, 60_000);

  it('refuses ports another running service answers on before touching anything: no banner, no invitation', async () => {
    // What another npm start on the same ports looks like: every port answers, /readyz with 200.
    const others = Array.from({ length: 3 }, () => createHttpServer((_request, response) => response.end('ok')));
    await withEmptyDatabase(async (database) => {
      try {
        const [port, internalPort, workerPort] = await Promise.all([freePort(), freePort(), freePort()]);
        await Promise.all(
          [port, internalPort, workerPort].map(
            (taken, index) => new Promise<void>((resolve) => others[index]!.listen(taken, resolve)),
          ),
        );
        const start = startService('scripts/start.ts', {
          ...environment(database.url, port, workerPort),
          API_INTERNAL_PORT: String(internalPort),
        });
        expect(await start.exited).toBe(1);
        expect(start.output()).toContain(`cannot listen on PORT ${port}`);
        expect(start.output()).toContain('another npm start?');
        // It printed that the service was running, and a new invitation, on the other's answers.
        expect(start.output()).not.toMatch(/The service is running|invitation|sk_live_|Stop it with Ctrl-C/i);
        // Nothing was done to the database (the other's demo endpoints were repointed at this start's receiver).
        await expect(database.db.schema.hasTable('workspaces')).resolves.toBe(false);
      } finally {
        await Promise.all(others.map((other) => new Promise((resolve) => other.close(resolve))));
      }
    });
  }, 60_000);

  it('names the backing service it cannot reach and how to start it, without a stack trace', async () => {
    await withEmptyDatabase(async (database) => {
      const unreachable = {
        Redis: { REDIS_URL: 'redis://127.0.0.1:1' },
        PostgreSQL: { DATABASE_URL: 'postgres://retention@127.0.0.1:1/retention' },
      };
      // Each start fails by itself: both side by side, not in turn.
      await Promise.all(
        Object.entries(unreachable).map(async ([service, override]) => {
          const start = startService('scripts/start.ts', {
            ...environment(database.url, await freePort(), await freePort()),
            ...override,
          });
          expect(await start.exited).toBe(1);
          expect(start.output()).toContain(`cannot reach ${service} at ${Object.values(override)[0]}`);
          expect(start.output()).toContain('up -d postgres redis');
          expect(start.output()).not.toMatch(/\n\s+at /);
        }),
      );
    });
  });
});

/** The first attempts of a new event's deliveries to the demo's endpoints at `receiver`, both answered. */
function delivered(receiver: string) {
  return [
    {
      name: 'CRM',
      url: `${receiver}/demo/crm`,
      status: 'succeeded',
      outcome: 'succeeded',
      http_status: 202,
      error: null,
      response_body: 'Accepted',
    },
    {
      name: 'Dunning emails',
      url: `${receiver}/demo/dunning`,
      status: 'succeeded',
      outcome: 'succeeded',
      http_status: 200,
      error: null,
      response_body: '{"queued":true}',
    },
  ];
}

/** The token of the demo owner's invitation link that `npm start` printed. */
function printedInvitation(output: string, base: string): string {
  const match = new RegExp(`${base.replace(/[.:/]/g, '\\$&')}/dashboard/invite/([A-Za-z0-9_-]{43})`).exec(output);
  if (!match) throw new Error(`no invitation link in:\n${output}`);
  return match[1]!;
}
