/**
 * `npm start`: the one-command demo. Creates and migrates the database, then runs the API
 * and the worker side by side until stopped (Ctrl-C or SIGTERM stops both).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ConfigError, loadConfig, redactUrl } from '@retention/core';
import { createDb, describeConnectionFailure, ensureDatabase, migrateLatest } from '@retention/db';
import { createRedis, waitForRedis } from '@retention/runtime';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

async function prepare(): Promise<void> {
  const config = loadConfig();
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
  const db = createDb(config.databaseUrl, { poolMax: 1, applicationName: 'retention-start' });
  try {
    const applied = await migrateLatest(db);
    process.stdout.write(`database ${redactUrl(config.databaseUrl)}: ${applied.length} migration(s) applied\n`);
  } finally {
    await db.destroy();
  }
}

function launch(entry: string): ChildProcess {
  return spawn(process.execPath, ['--import', 'tsx', path.join(root, entry)], { stdio: 'inherit', env: process.env });
}

async function main(): Promise<void> {
  await prepare();
  const children = [launch('services/api/src/main.ts'), launch('services/worker/src/main.ts')];
  let stopping = false;
  const stopAll = (signal: NodeJS.Signals) => {
    stopping = true;
    for (const child of children) if (child.exitCode === null) child.kill(signal);
  };
  process.once('SIGINT', () => stopAll('SIGTERM'));
  process.once('SIGTERM', () => stopAll('SIGTERM'));
  const codes = await Promise.all(
    children.map(
      (child) =>
        new Promise<number>((resolve) => {
          child.once('exit', (code) => {
            // One service dying takes the other down: a half-running demo only confuses.
            if (!stopping) stopAll('SIGTERM');
            resolve(code ?? 1);
          });
        }),
    ),
  );
  process.exitCode = codes.every((code) => code === 0) ? 0 : 1;
}

main().catch((error: unknown) => {
  process.stderr.write(
    `npm start failed: ${error instanceof ConfigError || error instanceof Error ? error.message : String(error)}\n`,
  );
  process.exitCode = 1;
});
