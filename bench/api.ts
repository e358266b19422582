/**
 * `npm run bench:api`: the REST API under load, against a baseline measured in the same run.
 *
 * Seeds (once) a workspace with 1,000,000 campaigns, 200,000 customers and 200,000 cancel
 * sessions, then drives each endpoint with autocannon (50 connections) against the API
 * process and against a bare node:http server running the same queries on the same pool, in
 * alternating rounds. Prints req/s, p50 and p99 per endpoint and the API/baseline ratio, each
 * server's CPU per request (from /proc: steadier than throughput on a shared machine), the
 * latency of stats for one client at a time, and saves a JSON report under bench/results/.
 *
 * Environment: BENCH_DATABASE_URL (default postgres://postgres:postgres@127.0.0.1:5432/retention_bench),
 * REDIS_URL, BENCH_SECONDS (load per scenario and server, default 10), BENCH_ONLY (run the scenarios whose name
 * contains this text).
 */
import { createDb, ensureDatabase, migrateLatest } from '@retention/db';
import { findOrSeedBenchWorkspace } from './seed-api-bench.js';
import {
  benchSecretsKey,
  freePort,
  load,
  processCpuMs,
  saveReport,
  startProcess,
  table,
  type LoadResult,
} from './support.js';

const databaseUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres:postgres@127.0.0.1:5432/retention_bench';
const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const seconds = Number(process.env.BENCH_SECONDS ?? 10);
const log = (line: string) => process.stdout.write(`${line}\n`);

const ROUNDS = 4;

/** One target's result: its rounds combined, and its server's CPU per request over them. */
type TargetResult = LoadResult & { cpuMicrosPerRequest: number | null };

/** Rounds of one target as one result: mean throughput, the median round's latencies. */
function combine(rounds: LoadResult[], cpuMs: number | null): TargetResult {
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
  return {
    requestsPerSecond: rounds.reduce((sum, round) => sum + round.requestsPerSecond, 0) / rounds.length,
    requests: rounds.reduce((sum, round) => sum + round.requests, 0),
    p50: median(rounds.map((round) => round.p50)),
    p99: median(rounds.map((round) => round.p99)),
    non2xx: rounds.reduce((sum, round) => sum + round.non2xx, 0),
    errors: rounds.reduce((sum, round) => sum + round.errors, 0),
    cpuMicrosPerRequest:
      cpuMs === null ? null : Math.round((cpuMs * 1000) / rounds.reduce((sum, round) => sum + round.requests, 0)),
  };
}

async function main(): Promise<void> {
  await ensureDatabase(databaseUrl);
  const db = createDb(databaseUrl, { poolMax: 2, statementTimeoutMs: 600_000 });
  await migrateLatest(db, { secretsKey: benchSecretsKey() });
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

  const only = process.env.BENCH_ONLY;
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
  ].filter((scenario) => !only || scenario.name.includes(only));

  const env = {
    DATABASE_URL: databaseUrl,
    REDIS_URL: redisUrl,
    REDIS_KEY_PREFIX: `bench-${Date.now()}`,
    LOG_LEVEL: 'info',
  };
  const results: Record<string, { api: TargetResult; baseline: TargetResult }> = {};

  // Both servers run side by side and take turns under load, scenario by scenario, so that
  // noise from the shared machine falls on both alike and the ratio stays meaningful.
  const apiPort = await freePort();
  const baselinePort = await freePort();
  const servers = [
    await startProcess(
      'services/api/src/main.ts',
      { ...env, PORT: String(apiPort), API_INTERNAL_PORT: '0' },
      /API listening/,
    ),
    await startProcess(
      'bench/baseline-server.ts',
      { ...env, PORT: String(baselinePort), BENCH_WORKSPACE_ID: workspaceId },
      /baseline listening/,
    ),
  ];
  const headers = { authorization: `Bearer ${token}` };
  let statsSequential: { p50: number; p99: number } | undefined;
  try {
    for (const scenario of scenarios) {
      const urls = {
        api: `http://127.0.0.1:${apiPort}${scenario.path}`,
        baseline: `http://127.0.0.1:${baselinePort}${scenario.path}`,
      };
      await load(urls.baseline, headers, 2); // warm-up: JIT, pool, Postgres buffers
      await load(urls.api, headers, 2);
      log(`${scenario.name}: ${ROUNDS} alternating rounds of ${seconds / ROUNDS} s each`);
      const rounds = { api: [] as LoadResult[], baseline: [] as LoadResult[] };
      const cpuMs: Record<'api' | 'baseline', number | null> = { api: 0, baseline: 0 };
      for (let round = 0; round < ROUNDS; round += 1) {
        for (const target of round % 2 === 0 ? (['baseline', 'api'] as const) : (['api', 'baseline'] as const)) {
          const pid = servers[target === 'api' ? 0 : 1]!.child.pid;
          const before = processCpuMs(pid);
          rounds[target].push(await load(urls[target], headers, seconds / ROUNDS));
          const after = processCpuMs(pid);
          const spent = cpuMs[target];
          cpuMs[target] = spent === null || before === null || after === null ? null : spent + after - before;
        }
      }
      results[scenario.name] = {
        api: combine(rounds.api, cpuMs.api),
        baseline: combine(rounds.baseline, cpuMs.baseline),
      };
    }
    // What one dashboard waits for its stats: sequential requests, no queueing behind others.
    statsSequential = await load(`http://127.0.0.1:${apiPort}/api/v1/stats`, headers, seconds / 2, 1);
  } finally {
    await Promise.all(servers.map((server) => server.stop()));
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
      'api CPU µs/req': api.cpuMicrosPerRequest ?? '-',
      'baseline CPU µs/req': baseline.cpuMicrosPerRequest ?? '-',
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
  if (statsSequential) {
    log(`stats, one client at a time: median ${statsSequential.p50} ms, p99 ${statsSequential.p99} ms`);
  }
  if (results.stats) log(`stats median under 50 connections (queueing included): ${results.stats.api.p50} ms`);
  log(`report: ${await saveReport('api', { seconds, connections: 50, results, statsSequential })}`);
}

main().catch((error: unknown) => {
  process.stderr.write(`bench:api failed: ${error instanceof Error ? error.stack : String(error)}\n`);
  process.exitCode = 1;
});
