/**
 * `npm start`: the one-command demo. Creates and migrates the database, seeds a demo
 * workspace on the first start, then runs the API and the worker side by side until stopped
 * (Ctrl-C or SIGTERM stops both) and prints where to point a browser or curl.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ConfigError, loadConfig, redactUrl, type Config } from '@retention/core';
import { createDb, describeConnectionFailure, ensureDatabase, migrateLatest, type Db } from '@retention/db';
import { seedDemo } from '@retention/domain';
import { createRedis, waitForRedis } from '@retention/runtime';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const say = (text: string) => process.stdout.write(`${text}\n`);

/** Checks both backing services before touching either, so the message names the one that is down. */
async function checkBackingServices(config: Config): Promise<void> {
  try {
    await ensureDatabase(config.databaseUrl);
  } catch (error) {
    throw new Error(describeConnectionFailure('PostgreSQL', config.databaseUrl, error));
  }
  const redis = createRedis(config.redisUrl, 'command', 'retention-start');
  try {
    await waitForRedis(redis);
  } catch (error) {
    throw new Error(describeConnectionFailure('Redis', config.redisUrl, error));
  } finally {
    redis.disconnect();
  }
}

/**
 * What to tell the newcomer once the API answers: on the first start, the fresh demo token
 * and a curl line; later, how to mint a token (token values are never stored, so the first
 * one cannot be shown again).
 */
async function seedOnFirstStart(db: Db, config: Config): Promise<string[]> {
  const existing = await db('workspaces').orderBy('created_at').first<{ id: string; name: string } | undefined>();
  if (existing) {
    return [
      `Workspace "${existing.name}" (${existing.id}) already exists; demo data is seeded on the first start only.`,
      'Token values are shown once, at creation. Mint one for it with:',
      `  npm run --silent cli -- token create --workspace ${existing.id} --name laptop`,
    ];
  }
  const demo = await seedDemo(db, { baseUrl: config.baseUrl });
  return [
    `Seeded the demo workspace "${demo.workspace.name}" (${demo.counts.customers} customers).`,
    `API token (shown this once): ${demo.token}`,
    `Try it:  ${demo.curl}`,
  ];
}

async function prepare(config: Config): Promise<string[]> {
  await checkBackingServices(config);
  const db = createDb(config.databaseUrl, { poolMax: 2, applicationName: 'retention-start' });
  try {
    const applied = await migrateLatest(db);
    say(`database ${redactUrl(config.databaseUrl)}: ${applied.length} migration(s) applied`);
    return await seedOnFirstStart(db, config);
  } finally {
    await db.destroy();
  }
}

function launch(entry: string): ChildProcess {
  return spawn(process.execPath, ['--import', 'tsx', path.join(root, entry)], { stdio: 'inherit', env: process.env });
}

/** True once the service on `port` answers /readyz; false if it has not within `timeoutMs`. */
async function ready(port: number, timeoutMs = 30_000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    try {
      const response = await fetch(`http://127.0.0.1:${port}/readyz`);
      if (response.ok) return true;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return false;
}

async function main(): Promise<void> {
  const config = loadConfig();
  const notes = await prepare(config);
  const children = [launch('services/api/src/main.ts'), launch('services/worker/src/main.ts')];
  let stopping = false;
  const stopAll = (signal: NodeJS.Signals) => {
    stopping = true;
    for (const child of children) if (child.exitCode === null) child.kill(signal);
  };
  process.once('SIGINT', () => stopAll('SIGTERM'));
  process.once('SIGTERM', () => stopAll('SIGTERM'));
  const exited = Promise.all(
    children.map(
      (child) =>
        new Promise<number>((resolve) => {
          child.once('exit', (code, signal) => {
            // One service dying takes the other down: a half-running demo only confuses.
            if (!stopping) stopAll('SIGTERM');
            // A child still starting when we stopped it has no handler yet and dies of the signal.
            resolve(code ?? (stopping && signal === 'SIGTERM' ? 0 : 1));
          });
        }),
    ),
  );
  const [apiUp, workerUp] = await Promise.all([ready(config.port), ready(config.workerPort)]);
  if (apiUp && workerUp && !stopping) {
    say(
      [
        '',
        `The service is running: API ${config.baseUrl}/api/v1, reference ${config.baseUrl}/docs`,
        ...notes,
        'Stop it with Ctrl-C.',
        '',
      ].join('\n'),
    );
  }
  const codes = await exited;
  process.exitCode = codes.every((code) => code === 0) ? 0 : 1;
}

main().catch((error: unknown) => {
  process.stderr.write(
    `npm start failed: ${error instanceof ConfigError || error instanceof Error ? error.message : String(error)}\n`,
  );
  process.exitCode = 1;
});
