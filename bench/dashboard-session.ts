/**
 * `npm run bench:dashboard-session`: what a dashboard request's session costs. 50 people,
 * each signed in with a session of their own, call the dashboard API of one API process
 * (services/api/src/main.ts, its own process as in production) over 50 connections, one
 * session per connection: GET /dashboard/api/me (every page's first call) and GET
 * /dashboard/api/tokens (a small Settings list, so the session is most of its cost). Prints
 * requests per second, p50 and p99 in milliseconds, and saves a report under bench/results.
 *
 * The session's cost does not depend on the number of campaigns, so this bench has a small
 * database of its own (BENCH_DASHBOARD_DATABASE_URL, dropped and made again at each run;
 * its name must contain "bench"). Environment: BENCH_SECONDS (default 10 per route), REDIS_URL.
 */
import { randomBytes } from 'node:crypto';
import { createDb, dropDatabase, ensureDatabase, migrateLatest } from '@retention/db';
import { createSession, createWorkspace, createToken } from '@retention/domain';
import { benchSecretsKey, load, saveReport, startProcess, table, type LoadResult } from './support.js';

const databaseUrl =
  process.env.BENCH_DASHBOARD_DATABASE_URL ?? 'postgres://postgres:postgres@127.0.0.1:5432/retention_bench_dashboard';
const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const seconds = Number(process.env.BENCH_SECONDS ?? 10);
const SESSIONS = 50;
const log = (line: string) => process.stdout.write(`${line}\n`);

/** One session cookie per connection (bench/support.ts's load). */
function loadWithSessions(url: string, cookies: string[], durationSeconds: number): Promise<LoadResult> {
  return load(url, {}, durationSeconds, cookies.length, (index) => ({ cookie: cookies[index]! }));
}

async function main(): Promise<void> {
  if (!/bench/.test(new URL(databaseUrl).pathname)) throw new Error('the bench database must be named *bench*');
  await dropDatabase(databaseUrl);
  await ensureDatabase(databaseUrl);
  const db = createDb(databaseUrl, { poolMax: 2 });
  const cookies: string[] = [];
  try {
    await migrateLatest(db, { secretsKey: benchSecretsKey() });
    const workspace = await createWorkspace(db, { name: 'Session bench' });
    for (let i = 0; i < 5; i += 1) await createToken(db, { workspace_id: workspace.id, name: `token ${i}` });
    const lifetimes = { idleMs: 12 * 3600_000, maxAgeMs: 7 * 24 * 3600_000 };
    for (let i = 0; i < SESSIONS; i += 1) {
      const rows: Array<{ id: string }> = await db('users')
        .insert({ workspace_id: workspace.id, email: `person${i}@bench.test`, role: i === 0 ? 'owner' : 'admin' })
        .returning('id');
      const { value } = await createSession(db, { user_id: rows[0]!.id, workspace_id: workspace.id }, lifetimes);
      cookies.push(`retention_session=${value}`);
    }
  } finally {
    await db.destroy();
  }

  const port = 3920;
  const api = await startProcess(
    'services/api/src/main.ts',
    {
      DATABASE_URL: databaseUrl,
      REDIS_URL: redisUrl,
      REDIS_KEY_PREFIX: `bench-session-${randomBytes(4).toString('hex')}`,
      PORT: String(port),
      API_INTERNAL_PORT: '0',
      LOG_LEVEL: 'info',
    },
    /API listening/,
  );
  const results: Record<string, LoadResult> = {};
  try {
    for (const path of ['/dashboard/api/me', '/dashboard/api/tokens']) {
      const url = `http://127.0.0.1:${port}${path}`;
      await loadWithSessions(url, cookies, 2); // warm-up: JIT, pool, Postgres buffers
      log(`${path}: ${seconds} s at ${SESSIONS} connections, one session each`);
      results[path] = await loadWithSessions(url, cookies, seconds);
    }
  } finally {
    await api.stop();
  }
  log(
    table(
      Object.entries(results).map(([route, result]) => ({
        route,
        'req/s': Math.round(result.requestsPerSecond),
        'p50 ms': result.p50,
        'p99 ms': result.p99,
        'non-2xx': result.non2xx,
        errors: result.errors,
      })),
    ),
  );
  log(`report: ${await saveReport('dashboard-session', { seconds, sessions: SESSIONS, results })}`);
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exitCode = 1;
});
