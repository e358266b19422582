/**
 * `npm start`: the one-command demo. Creates and migrates the database, runs the API and the
 * worker side by side until stopped (Ctrl-C or SIGTERM stops both), and once they answer
 * seeds a demo workspace on the first start and prints where to point a browser or curl.
 * A local receiver (demo-receiver.ts) answers the demo's webhook endpoints meanwhile, on the
 * same port at every start while that port is free.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm, symlink } from 'node:fs/promises';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { ConfigError, loadConfig, parseDuration, redactUrl, type Config } from '@retention/core';
import { createDb, describeConnectionFailure, ensureDatabase, migrateLatest, type Db } from '@retention/db';
import {
  DEMO_DEFAULT_CUSTOMERS,
  DEMO_MAX_CUSTOMERS,
  inviteMember,
  lastDemoReceiver,
  MIN_DEMO_CUSTOMERS,
  pointDemoEndpointsAt,
  seedDemo,
  type Actor,
} from '@retention/domain';
import {
  createRedis,
  DEVELOPMENT_SECRETS_KEY_FILE,
  developmentSecretsKey,
  listenOn,
  OpenedResources,
  waitForRedis,
} from '@retention/runtime';
import { bundleProcesses } from './bundle-processes.js';
import { cliCommandHint } from './cli-hint.js';
import { ensureDashboardBuilt } from './dashboard-build.js';
import { startDemoReceiver } from './demo-receiver.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const say = (text: string) => process.stdout.write(`${text}\n`);
/**
 * Who the security log names for what this script makes and changes (the demo's token and
 * endpoints, the owner's invitation, a move of the receiver), and the Tokens page for the
 * demo's token: one name for both, in words a business user reads ("Demo setup"), not the
 * command a developer typed ("npm start", as it read before: docs/decisions.md, "Demo data").
 */
const NPM_START: Actor = { type: 'system', label: 'Demo setup' };

/** Checks both backing services before touching either, so the message names the one that is down. */
async function checkBackingServices(config: Config): Promise<void> {
  const opened = new OpenedResources();
  await opened.step(
    () => ensureDatabase(config.databaseUrl),
    (error) => new Error(describeConnectionFailure('PostgreSQL', config.databaseUrl, error)),
  );
  const redis = opened.add(createRedis(config.redisUrl, 'command', 'retention-start'), (redis) => redis.disconnect());
  await opened.step(
    () => waitForRedis(redis),
    (error) => new Error(describeConnectionFailure('Redis', config.redisUrl, error)),
  );
  await opened.closeAll(); // only a check: nothing stays open
}

/** A small pool for one step of the start, closed once the step is done. */
async function withDb<T>(config: Config, use: (db: Db) => Promise<T>): Promise<T> {
  const db = createDb(config.databaseUrl, { poolMax: 2, applicationName: 'retention-start' });
  try {
    return await use(db);
  } finally {
    await db.destroy();
  }
}

/**
 * What to tell the newcomer once the service answers: on the first start, the fresh demo
 * token and a curl line; later, how to mint a token (token values are never stored, so the
 * first one cannot be shown again). Seeding waits until then, so that a start that fails
 * (a port in use) mints no token nobody sees: the next start seeds instead.
 */
function seedOnFirstStart(config: Config, env: NodeJS.ProcessEnv, demo: DemoSettings): Promise<string[]> {
  return withDb(config, async (db) => [
    ...(await seedOrDescribe(db, config, env, demo)),
    ...(await dashboardSignIn(db, config)),
    ...operatorCliPrefix(env),
  ]);
}

/**
 * `hint`'s command with its "set as when starting" note: the settings that hold a secret
 * (a URL with a password, a given SECRETS_KEY) are named, not printed.
 */
function withSecretsNamed(command: string, env: NodeJS.ProcessEnv): { command: string; asWhenStarting: string } {
  const hint = cliCommandHint(command, env, Boolean(process.env.SECRETS_KEY?.trim()));
  return {
    command: hint.command,
    asWhenStarting: hint.setAsWhenStarting.length
      ? ` (with ${hint.setAsWhenStarting.join(' and ')} set as when starting: secrets are not printed)`
      : '',
  };
}

/**
 * On every start, the first too: how to run the operator CLI against this service. Without
 * this start's BASE_URL the CLI prints links on port 3000 (a processor's webhook URL, an
 * invitation), and without its DATABASE_URL or REDIS_KEY_PREFIX it works on other data.
 */
function operatorCliPrefix(env: NodeJS.ProcessEnv): string[] {
  const hint = withSecretsNamed('npm run --silent cli -- <command>', env);
  return [`Operator CLI for this service${hint.asWhenStarting}:`, `  ${hint.command}`];
}

/**
 * The dashboard's URL and a way in: a fresh invitation link for the first workspace's owner
 * while they have no password (it revokes the one printed by the previous start).
 */
async function dashboardSignIn(db: Db, config: Config): Promise<string[]> {
  const lines = [`Dashboard: ${config.baseUrl}/dashboard/`];
  const owner = await db('users as u')
    .join('workspaces as w', 'w.id', 'u.workspace_id')
    .where('u.role', 'owner')
    .orderBy([{ column: 'w.created_at' }, { column: 'u.created_at' }])
    .first<{ workspace_id: string; email: string; password_hash: string | null } | undefined>(
      'u.workspace_id',
      'u.email',
      'u.password_hash',
    );
  if (!owner) return lines;
  if (owner.password_hash) return [...lines, `Sign in as ${owner.email}.`];
  const invited = await inviteMember(
    db,
    {
      workspace_id: owner.workspace_id,
      email: owner.email,
      role: 'owner',
      inviter_role: null,
      base_url: config.baseUrl,
    },
    NPM_START,
  );
  return [...lines, `Sign in as the demo owner (${owner.email}): ${invited.invite_url}`];
}

/** What the first start's demo is made with: its receiver's origin and its size. */
interface DemoSettings {
  receiver: string;
  customers: number;
}

async function seedOrDescribe(
  db: Db,
  config: Config,
  env: NodeJS.ProcessEnv,
  settings: DemoSettings,
): Promise<string[]> {
  const existing = await db('workspaces').orderBy('created_at').first<{ id: string; name: string } | undefined>();
  if (existing) {
    // With this start's DATABASE_URL and the like, or it would mint the token elsewhere.
    const hint = withSecretsNamed(`npm run --silent cli -- token create --workspace ${existing.id} --name laptop`, env);
    return [
      `Workspace "${existing.name}" (${existing.id}) already exists; demo data is seeded on the first start only.`,
      `Token values are shown once, at creation. Mint one for it with${hint.asWhenStarting}:`,
      `  ${hint.command}`,
    ];
  }
  const demo = await seedDemo(db, {
    baseUrl: config.baseUrl,
    secretsKey: config.secretsKey,
    actor: NPM_START,
    ...settings,
  });
  return [
    `Seeded the demo workspace "${demo.workspace.name}" (${demo.workspace.id}, ${demo.counts.customers} customers).`,
    `API token (shown this once): ${demo.token}`,
    `Try it:  ${demo.curl}`,
  ];
}

async function migrate(config: Config): Promise<void> {
  await checkBackingServices(config);
  const applied = await withDb(config, (db) => migrateLatest(db, { secretsKey: config.secretsKey }));
  say(`database ${redactUrl(config.databaseUrl)}: ${applied.length} migration(s) applied`);
}

/**
 * Ports picked for a PORT, WORKER_PORT or API_INTERNAL_PORT of 0, held (listened on) until
 * `release`, just before the services start. Released at once, they stayed free only by chance
 * through the migrations, the bundling and the demo receiver's start: anything listening on
 * port 0 meanwhile (the receiver itself, or another process) could be given one, and the
 * service asked to listen there failed with EADDRINUSE.
 */
interface HeldPorts {
  ports: number[];
  release(): Promise<void>;
}

/** Free ports, all different, held until `release`. */
async function holdFreePorts(count: number): Promise<HeldPorts> {
  const servers = Array.from({ length: count }, () => createServer());
  const release = async () => {
    await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  };
  try {
    const ports = await Promise.all(
      servers.map(
        (server) =>
          new Promise<number>((resolve, reject) => {
            server.once('error', reject);
            // No host, like the services: free on every interface they listen on.
            server.listen(0, () => resolve((server.address() as AddressInfo).port));
          }),
      ),
    );
    return { ports, release };
  } catch (error) {
    await release();
    throw error;
  }
}

/**
 * Refuses a port something already listens on, before anything else is done. The services would
 * fail to listen on it, but too late: this script would have repointed the demo's endpoints at its
 * own receiver and, its readiness probe answered by whatever holds the ports (another npm start on
 * the same ones), printed "The service is running" and a fresh invitation link.
 */
async function ensurePortsFree(config: Config, held: HeldPorts): Promise<void> {
  const ports = [
    ['PORT', config.port],
    ['API_INTERNAL_PORT', config.apiInternalPort],
    ['WORKER_PORT', config.workerPort],
  ] as const;
  // A picked port is free: this script holds it.
  for (const [variable, port] of ports.filter(([, port]) => !held.ports.includes(port))) {
    const probe = createServer();
    try {
      // No host, like the services: free on every interface they listen on.
      await listenOn(probe, port, variable);
    } catch (error) {
      throw new Error(
        `${(error as Error).message}. Something (another npm start?) listens there: stop it, or set ${variable} to a free port.`,
      );
    } finally {
      await new Promise((resolve) => probe.close(resolve));
    }
  }
}

/**
 * The configuration, with a PORT, WORKER_PORT or API_INTERNAL_PORT of 0 ("any free port") replaced by a port
 * picked here, so that this script knows where to check the services and what to print; and
 * with BASE_URL, when unset, naming the API's port here rather than the default 3000, so
 * that the printed URLs, the demo's curl line and the webhook User-Agent are right.
 * Returns the environment to start the services with, and the picked ports, held until then.
 */
async function configWithConcretePorts(): Promise<{ config: Config; env: NodeJS.ProcessEnv; held: HeldPorts }> {
  const env = { ...process.env };
  if (!env.SECRETS_KEY?.trim()) env.SECRETS_KEY = developmentSecretsKey(DEVELOPMENT_SECRETS_KEY_FILE, say);
  const asked = loadConfig(env);
  const asks = { PORT: asked.port, WORKER_PORT: asked.workerPort, API_INTERNAL_PORT: asked.apiInternalPort };
  const unset = (['PORT', 'WORKER_PORT', 'API_INTERNAL_PORT'] as const).filter((name) => asks[name] === 0);
  const held = await holdFreePorts(unset.length);
  unset.forEach((name, index) => (env[name] = String(held.ports[index])));
  if (!env.BASE_URL?.trim()) env.BASE_URL = `http://localhost:${loadConfig(env).port}`;
  if (!env.WEBHOOK_ALLOW_PRIVATE_NETWORKS?.trim()) {
    env.WEBHOOK_ALLOW_PRIVATE_NETWORKS = 'true';
    say(
      'WEBHOOK_ALLOW_PRIVATE_NETWORKS is not set: true for npm start, so that webhooks reach the demo receiver ' +
        'on 127.0.0.1. Set it to false to refuse private addresses, as the production entrypoints do by default.',
    );
  }
  return { config: loadConfig(env), env, held };
}

interface Services {
  /** Aborted once the services are being stopped: a signal, or one of them exited. */
  stopping: AbortSignal;
  /** Each service's exit code, once both have exited. */
  exited: Promise<number[]>;
  stop(): void;
}

/** Where this start's bundle of the API and the worker is, and how to remove it. */
interface ServicesBundle {
  dir: string;
  remove(): Promise<void>;
}

/**
 * The API and the worker bundled from this checkout's sources, as `npm run build` bundles them
 * for the image, into a directory of this start's own (two starts side by side each have theirs),
 * beside a link to node_modules and one to the dashboard's build. Each service then loads one
 * file rather than some 900 modules through tsx: both answer in about half the time
 * (docs/performance.md, "Test run"), for the half second the bundling takes. Made afresh on
 * every start, so an edited source is what runs, as it was through tsx.
 */
async function bundleServices(): Promise<ServicesBundle> {
  const dir = await mkdtemp(path.join(tmpdir(), 'retention-npm-start-'));
  const remove = () => rm(dir, { recursive: true, force: true });
  try {
    await bundleProcesses({ outdir: dir, quiet: true, only: ['api', 'worker'], linkDashboard: true });
    // A junction on Windows, where a directory symlink needs an administrator; ignored elsewhere.
    await symlink(path.join(root, 'node_modules'), path.join(dir, 'node_modules'), 'junction');
  } catch (error) {
    await remove();
    throw error;
  }
  return { dir, remove };
}

/** Runs the API and the worker; one dying takes the other down (a half-running demo only confuses). */
function startServices(bundle: ServicesBundle, env: NodeJS.ProcessEnv): Services {
  // Source maps: a stack trace names the TypeScript source, as it did through tsx.
  const children = ['api.js', 'worker.js'].map((file) =>
    spawn(process.execPath, ['--enable-source-maps', path.join(bundle.dir, file)], { stdio: 'inherit', env }),
  );
  const stopping = new AbortController();
  const stop = () => {
    stopping.abort();
    for (const child of children) if (child.exitCode === null) child.kill('SIGTERM');
  };
  // Every time, not once: Ctrl-C reaches this process twice (from the terminal and from npm),
  // and a signal with no handler left would kill it. The services take a repeat more than
  // 2 s later as "stop now".
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  const exited = Promise.all(
    children.map(
      (child) =>
        new Promise<number>((resolve) => {
          child.once('exit', (code, signal) => {
            const stopped = stopping.signal.aborted;
            if (!stopped) stop();
            // A child still starting when we stopped it has no handler yet and dies of the signal.
            resolve(code ?? (stopped && signal === 'SIGTERM' ? 0 : 1));
          });
        }),
    ),
  );
  return { stopping: stopping.signal, exited, stop };
}

/** True once the service on `port` answers /readyz; false if `signal` aborts first. */
async function ready(port: number, signal: AbortSignal): Promise<boolean> {
  while (!signal.aborted) {
    try {
      const response = await fetch(`http://127.0.0.1:${port}/readyz`, { signal });
      await response.body?.cancel();
      if (response.ok) return true;
    } catch {
      // not listening yet, or aborted
    }
    await sleep(200, undefined, { signal }).catch(() => undefined);
  }
  return false;
}

/** START_READY_TIMEOUT: how long to wait for both services to answer /readyz (30s by default). */
function readyTimeoutMs(): number {
  const text = process.env.START_READY_TIMEOUT?.trim() || '30s';
  const millis = parseDuration(text);
  if (millis === null) throw new ConfigError('START_READY_TIMEOUT', `"${text}" is not a duration such as 30s or 2m`);
  return millis;
}

/**
 * DEMO_CUSTOMERS: how many customers the first start's demo has, 500 by default; the bounds of
 * `demo seed --customers`. Read before anything is touched, so a bad value changes nothing.
 */
function demoCustomers(): number {
  const text = process.env.DEMO_CUSTOMERS?.trim() || String(DEMO_DEFAULT_CUSTOMERS);
  const customers = /^\d{1,6}$/.test(text) ? Number(text) : NaN;
  if (!(customers >= MIN_DEMO_CUSTOMERS && customers <= DEMO_MAX_CUSTOMERS)) {
    throw new ConfigError(
      'DEMO_CUSTOMERS',
      `"${text}" is not a whole number from ${MIN_DEMO_CUSTOMERS} to ${DEMO_MAX_CUSTOMERS}`,
    );
  }
  return customers;
}

/**
 * Waits for both services to answer /readyz, for at most `timeoutMs`. Returns which ones
 * did, or undefined when the services are stopping (a signal, or one exited: a port in use
 * fails at once, not after the timeout).
 */
async function waitUntilReady(
  config: Config,
  services: Services,
  timeoutMs: number,
): Promise<{ api: boolean; worker: boolean } | undefined> {
  const signal = AbortSignal.any([services.stopping, AbortSignal.timeout(timeoutMs)]);
  // The API's /readyz is on its internal port.
  const [api, worker] = await Promise.all([ready(config.apiInternalPort, signal), ready(config.workerPort, signal)]);
  return services.stopping.aborted ? undefined : { api, worker };
}

/**
 * The port the receiver listens on if it can: the last start's (`lastDemoReceiver`), so that the
 * endpoints on it keep working with nothing repointed. Not when this start's services take that
 * port (PORT, WORKER_PORT or API_INTERNAL_PORT set to it, or picked by chance for a 0): the
 * receiver starts first and would hold it.
 */
function receiverPort(config: Config, last: string | undefined): number | undefined {
  const port = last === undefined ? undefined : Number(new URL(last).port);
  return port === undefined || [config.port, config.apiInternalPort, config.workerPort].includes(port)
    ? undefined
    : port;
}

/** Said when the receiver could not have the last start's port: where it is now, and what moved. */
function movedNote(last: string | undefined, origin: string, moved: number): string[] {
  if (last === undefined || last === origin) return [];
  const endpoints = moved === 1 ? '1 endpoint' : `${moved} endpoints`;
  return [
    `The demo webhook receiver's port of the last start (${new URL(last).port}) is taken: it listens on ` +
      `${new URL(origin).port} now, and ${endpoints} on ${last} now point there (each change is in the Security log).`,
  ];
}

/**
 * Where the demo's webhooks go, and whether the worker may reach it. The operator CLI runs in
 * a process of its own, which neither trusts the receiver's certificate nor (by default) may
 * reach a loopback address: the note says how its `webhook test` can, while this runs.
 */
function receiverNote(config: Config, receiver: { origin: string; trustFile: string }): string {
  return config.webhookAllowPrivateNetworks
    ? `Demo webhook receiver: ${receiver.origin} (the demo's endpoints point here and it answers as their receivers would;\n` +
        `  a POST on any other path, e.g. an endpoint you add at ${receiver.origin}/mine, is answered 200; no signature is checked;\n` +
        `  the next start listens on this port again, or, if it is taken then, moves every endpoint on it to its new one;\n` +
        `  the CLI's webhook test and webhook resend, which send from the CLI's own process, reach it with\n` +
        `  WEBHOOK_ALLOW_PRIVATE_NETWORKS=true NODE_EXTRA_CA_CERTS=${receiver.trustFile})`
    : `Demo webhook receiver: ${receiver.origin}; WEBHOOK_ALLOW_PRIVATE_NETWORKS=false refuses loopback addresses, ` +
        "so deliveries to the demo's endpoints fail";
}

function banner(
  config: Config,
  readiness: { api: boolean; worker: boolean; timeoutMs: number },
  notes: string[],
): string {
  const late = [
    !readiness.api && `the API (port ${config.port})`,
    !readiness.worker && `the worker (port ${config.workerPort})`,
  ]
    .filter(Boolean)
    .join(' and ');
  const heading = late
    ? [
        `Warning: ${late} did not answer /readyz within ${readiness.timeoutMs / 1000} s; see the log above.`,
        `Once it does: API ${config.baseUrl}/api/v1, reference ${config.baseUrl}/docs`,
      ]
    : [`The service is running: API ${config.baseUrl}/api/v1, reference ${config.baseUrl}/docs`];
  return [
    '',
    ...heading,
    `API health and metrics: http://localhost:${config.apiInternalPort}/readyz, /metrics`,
    `Worker health and metrics: http://localhost:${config.workerPort}/readyz, /metrics`,
    ...notes,
    'Stop it with Ctrl-C.',
    '',
  ].join('\n');
}

async function main(): Promise<void> {
  const { config, env, held } = await configWithConcretePorts();
  try {
    await run(config, env, held);
  } finally {
    // Released before the services start; here only when a step before that failed.
    await held.release();
  }
}

async function run(config: Config, env: NodeJS.ProcessEnv, held: HeldPorts): Promise<void> {
  const timeoutMs = readyTimeoutMs();
  const customers = demoCustomers();
  await ensurePortsFree(config, held);
  // Bundled while the database is migrated; removed if a step fails, or once the services exit.
  const bundling = bundleServices();
  // Its failure is handled once awaited below: not an unhandled rejection while migrating.
  bundling.catch(() => undefined);
  try {
    await migrate(config);
    await ensureDashboardBuilt(say);
  } catch (error) {
    await bundling.then(
      (bundle) => bundle.remove(),
      () => undefined,
    );
    throw error;
  }
  // The receiver and the services stop when a later step fails; otherwise they run until a
  // signal stops the services, and the receiver closes after them (it answers to the last).
  const opened = new OpenedResources();
  const bundle = opened.add(await bundling, (bundle) => bundle.remove());
  const last = await opened.step(() => withDb(config, (db) => lastDemoReceiver(db)));
  const receiver = opened.add(
    await startDemoReceiver({ port: receiverPort(config, last), extraCaCerts: env.NODE_EXTRA_CA_CERTS, say }),
    (receiver) => receiver.close(),
  );
  env.NODE_EXTRA_CA_CERTS = receiver.trustFile;
  // Before the worker starts: when the last port was taken, a delivery left pending goes to
  // this start's receiver, not to the last one's port. It remembers this start's origin too.
  const moved = await opened.step(() => withDb(config, (db) => pointDemoEndpointsAt(db, receiver.origin, NPM_START)));
  await held.release();
  const services = opened.add(startServices(bundle, env), (services) => services.stop());
  const readiness = await waitUntilReady(config, services, timeoutMs);
  if (readiness) {
    const notes = await opened.step(() => seedOnFirstStart(config, env, { receiver: receiver.origin, customers }));
    // Printed even if a stop came in meanwhile: a token just minted must never go unseen.
    say(
      banner(config, { ...readiness, timeoutMs }, [
        ...notes,
        receiverNote(config, receiver),
        ...movedNote(last, receiver.origin, moved),
      ]),
    );
  }
  const codes = await services.exited;
  await opened.closeAll();
  process.exitCode = codes.every((code) => code === 0) ? 0 : 1;
}
main().catch((error: unknown) => {
  process.stderr.write(`npm start failed: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = 1;
});
