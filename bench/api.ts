/**
 * `npm run bench:api`: the REST API under load, against a baseline measured in the same run.
 *
 * Seeds (once) a workspace with 1,000,000 campaigns, 200,000 customers and 200,000 cancel
 * sessions, then drives each endpoint with autocannon (50 connections) against the API
 * process and against a bare node:http server running the same queries on the same pool.
 * Prints req/s, p50 and p99 per endpoint and the API/baseline ratio, and saves a JSON report
 * under bench/results/.
 *
 * Environment: BENCH_DATABASE_URL (default postgres://postgres:postgres@127.0.0.1:5432/retention_bench),
 * REDIS_URL, BENCH_SECONDS (per scenario, default 10), BENCH_ONLY (run the scenarios whose name
 * contains this text).
 */
import { createDb, ensureDatabase, migrateLatest } from '@retention/db';
import { findOrSeedBenchWorkspace } from './seed-api-bench.js';
import { load, saveReport, startProcess, table, type LoadResult } from './support.js';

const databaseUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres:postgres@127.0.0.1:5432/retention_bench';
const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const seconds = Number(process.env.BENCH_SECONDS ?? 10);
const log = (line: string) => process.stdout.write(`${line}\n`);

async function main(): Promise<void> {
  await ensureDatabase(databaseUrl);
  const db = createDb(databaseUrl, { poolMax: 2, statementTimeoutMs: 600_000 });
  await migrateLatest(db);
  const { workspaceId, token } = await findOrSeedBenchWorkspace(db, log);
  const middle = await db('recovery_campaigns')
    .where({ workspace_id: workspaceId })
    .orderBy([
      { column: 'first_failed_at', order: 'desc' },
      { column: 'id', order: 'desc' },
    ])
    .offset(500_000)
    .first<{ id: string; first_failed_at: Date }>('id', 'first_failed_at');
  await db.destroy();
  if (!middle) throw new Error('the benchmark workspace has no campaigns');

  const scenarios = [
    { name: 'campaigns, first page', path: '/api/v1/campaigns' },
    {
      name: 'campaigns, page at row 500,000',
      path: `/api/v1/campaigns?cursor=${encodeURIComponent(middle.first_failed_at.toISOString())}`,
    },
    { name: 'customers, first page', path: '/api/v1/customers' },
    { name: 'cancel sessions, first page', path: '/api/v1/cancel_sessions' },
    { name: 'one campaign', path: `/api/v1/campaigns/${middle.id}` },
    { name: 'stats', path: '/api/v1/stats' },
  ];

  const env = {
    DATABASE_URL: databaseUrl,
    REDIS_URL: redisUrl,
    REDIS_KEY_PREFIX: `bench-${Date.now()}`,
    LOG_LEVEL: 'info',
  };
  const results: Record<string, { api: LoadResult; baseline: LoadResult }> = {};
  for (const scenario of scenarios) results[scenario.name] = { api: undefined!, baseline: undefined! };

  for (const target of ['baseline', 'api'] as const) {
    const port = target === 'api' ? 3910 : 3911;
    const server =
      target === 'api'
        ? await startProcess('services/api/src/main.ts', { ...env, PORT: String(port) }, /API listening/)
        : await startProcess(
            'bench/baseline-server.ts',
            { ...env, PORT: String(port), BENCH_WORKSPACE_ID: workspaceId },
            /baseline listening/,
          );
    try {
      for (const scenario of scenarios) {
        const url = `http://127.0.0.1:${port}${scenario.path}`;
        const headers = { authorization: `Bearer ${token}` };
        await load(url, headers, 2); // warm-up: JIT, pool, Postgres buffers
        log(`${target}: ${scenario.name}`);
        results[scenario.name]![target] = await load(url, headers, seconds);
      }
    } finally {
      await server.stop();
    }
  }

  const rows = scenarios.map(({ name }) => {
    const { api, baseline } = results[name]!;
    return {
      scenario: name,
      'api req/s': Math.round(api.requestsPerSecond),
      'api p50 ms': api.p50,
      'api p99 ms': api.p99,
      'baseline req/s': Math.round(baseline.requestsPerSecond),
      'baseline p99 ms': baseline.p99,
      'api/baseline': (api.requestsPerSecond / baseline.requestsPerSecond).toFixed(2),
      'non-2xx': api.non2xx + baseline.non2xx,
    };
  });
  log('');
  log(table(rows));
  const first = results['campaigns, first page']?.api;
  const deep = results['campaigns, page at row 500,000']?.api;
  log('');
  if (first && deep)
    log(`deep page / first page throughput: ${(deep.requestsPerSecond / first.requestsPerSecond).toFixed(2)}`);
  if (results.stats) log(`stats median latency under load: ${results.stats.api.p50} ms`);
  log(`report: ${await saveReport('api', { seconds, connections: 50, results })}`);
}

main().catch((error: unknown) => {
  process.stderr.write(`bench:api failed: ${error instanceof Error ? error.stack : String(error)}\n`);
  process.exitCode = 1;
});
