import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { Redis } from 'ioredis';
import { parseSecretsKey } from '@retention/core';
import { createDb, migrateLatest } from '@retention/db';
import { mkdtemp, symlink } from 'node:fs/promises';
import { bundleProcesses } from '../../../scripts/bundle-processes.js';
import { ensureDashboardBuilt } from '../../../scripts/dashboard-build.js';
import { BUNDLE_DIR_VARIABLE } from './process-bundle.js';
import {
  databaseUrl,
  REPO_ROOT,
  RUN_ID_VARIABLE,
  TEST_POSTGRES_URL,
  TEST_REDIS_URL,
  templateDatabaseName,
} from './environment.js';

/**
 * Once per `npm test`: checks that the real PostgreSQL and Redis answer, builds the template
 * database every test file clones, builds the dashboard if it is missing or stale, so that
 * test files running side by side find it built rather than each building it at once, and
 * bundles the processes the tests start (process-bundle.ts).
 */
export default async function globalSetup(): Promise<void> {
  const id = `${Date.now().toString(36)}${randomBytes(3).toString('hex')}`;
  process.env[RUN_ID_VARIABLE] = id;
  // Every process needs SECRETS_KEY; workers and the processes tests spawn inherit this one.
  if (!process.env.SECRETS_KEY?.trim()) process.env.SECRETS_KEY = randomBytes(32).toString('base64');
  // The processes tests spawn (npm start, the services, the CLI: hundreds in a run) each load
  // the same few hundred modules: V8's compiled code is kept on disk and reused rather than
  // compiled again in each (Node checks each module's content, so a changed one is compiled
  // afresh). Measured on the CLI's start: docs/performance.md, "Test run".
  process.env.NODE_COMPILE_CACHE ??= path.join(tmpdir(), 'node-compile-cache');
  // Passwords hashed at argon2id's smallest cost rather than OWASP's 19 MiB, by every worker
  // and spawned process: at the real cost, hashing was about a ninth of the run's CPU
  // (docs/decisions.md, "Password hashing in tests"). The suites that check the real cost, or
  // start a process with NODE_ENV=production (which refuses it), remove it themselves.
  process.env.INSECURE_FAST_PASSWORD_HASHING ??= '1';

  const admin = new pg.Client({ connectionString: TEST_POSTGRES_URL, connectionTimeoutMillis: 5_000 });
  try {
    await admin.connect();
  } catch (error) {
    throw new Error(`Tests need PostgreSQL at ${TEST_POSTGRES_URL} (set TEST_POSTGRES_URL): ${String(error)}`);
  }
  const template = templateDatabaseName(id);
  await admin.query(`CREATE DATABASE ${pg.escapeIdentifier(template)}`);
  await admin.end();

  const db = createDb(databaseUrl(template), { poolMax: 1 });
  try {
    await migrateLatest(db, { secretsKey: parseSecretsKey(process.env) });
  } finally {
    await db.destroy();
  }

  const redis = new Redis(TEST_REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1, retryStrategy: () => null });
  try {
    await redis.connect();
    await redis.ping();
  } catch (error) {
    throw new Error(`Tests need Redis at ${TEST_REDIS_URL} (set TEST_REDIS_URL): ${String(error)}`);
  } finally {
    redis.disconnect();
  }

  await ensureDashboardBuilt();
  await bundleTestedProcesses();
}

/**
 * The processes bundled as the container image runs them, in a directory of their own beside a
 * link to the repository's node_modules (as test/deployment.test.ts builds its own), after the
 * dashboard's build, which the bundled API serves from beside it. Global teardown removes it.
 */
async function bundleTestedProcesses(): Promise<void> {
  const dir = await mkdtemp(path.join(tmpdir(), 'retention-test-bundle-'));
  await bundleProcesses({ outdir: dir, quiet: true });
  await symlink(path.join(REPO_ROOT, 'node_modules'), path.join(dir, 'node_modules'));
  process.env[BUNDLE_DIR_VARIABLE] = dir;
}
