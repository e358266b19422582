/**
 * `npm run bench:insights`: the dashboard overview's data on the API bench's workspace
 * (1,000,000 campaigns, 200,000 cancel sessions; seeded once by bench/api.ts's seeder, reused).
 *
 * Calls the overview read model (`computeOverview`, what GET /dashboard/api/overview serves)
 * for each period one call at a time, BENCH_INSIGHT_CALLS times (default 200) after a warm-up,
 * beside `computeStats` (GET /api/v1/stats), and prints the median and p99 in milliseconds.
 * The target (docs/performance.md): the overview's data under 150 ms median.
 *
 * Environment: BENCH_DATABASE_URL as bench/api.ts.
 */
import { performance } from 'node:perf_hooks';
import { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { stringify } from 'csv-stringify';
import {
  CAMPAIGN_EXPORT_COLUMNS,
  campaignListQuery,
  createDb,
  ensureDatabase,
  migrateLatest,
  type Db,
} from '@retention/db';
import { computeOverview, computeStats, OVERVIEW_PERIODS } from '@retention/domain';
import { csvCells } from '../services/api/src/dashboard/insights-export.js';
import { findOrSeedBenchWorkspace } from './seed-api-bench.js';
import { saveReport, table } from './support.js';

const databaseUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres:postgres@127.0.0.1:5432/retention_bench';
const calls = Number(process.env.BENCH_INSIGHT_CALLS ?? 200);
const log = (line: string) => process.stdout.write(`${line}\n`);

async function timed(run: () => Promise<unknown>): Promise<{ median: number; p99: number }> {
  for (let i = 0; i < 5; i += 1) await run(); // warm the pool, the plans and the cache
  const durations: number[] = [];
  for (let i = 0; i < calls; i += 1) {
    const started = performance.now();
    await run();
    durations.push(performance.now() - started);
  }
  durations.sort((a, b) => a - b);
  const at = (quantile: number) =>
    Math.round(durations[Math.min(durations.length - 1, Math.ceil(quantile * durations.length) - 1)]! * 10) / 10;
  return { median: at(0.5), p99: at(0.99) };
}

/**
 * The campaigns CSV export of the whole workspace (1,000,000 rows) through the route's own
 * pipeline (cursor, cells, csv-stringify) into a sink: rows, bytes, seconds and the peak RSS
 * above the starting RSS, sampled every 50 ms. Flat memory is the point.
 */
async function exportMemory(db: Db, workspaceId: string) {
  const startRss = process.memoryUsage().rss;
  let peakRss = startRss;
  const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 50);
  let bytes = 0;
  let rows = -1; // the header line
  const started = performance.now();
  try {
    await pipeline(
      campaignListQuery(db, workspaceId, {}).stream({ highWaterMark: 500 }),
      csvCells(CAMPAIGN_EXPORT_COLUMNS),
      stringify({ header: true, columns: [...CAMPAIGN_EXPORT_COLUMNS] }),
      new Writable({
        write(chunk: Buffer, _encoding, done) {
          bytes += chunk.length;
          for (const byte of chunk) if (byte === 10) rows += 1;
          done();
        },
      }),
    );
  } finally {
    clearInterval(sampler);
  }
  return {
    rows,
    megabytes: Math.round(bytes / 1e5) / 10,
    seconds: Math.round((performance.now() - started) / 100) / 10,
    peak_rss_growth_mb: Math.round((peakRss - startRss) / 1e5) / 10,
  };
}

async function main(): Promise<void> {
  await ensureDatabase(databaseUrl);
  const db = createDb(databaseUrl, { poolMax: 2, statementTimeoutMs: 600_000 });
  try {
    await migrateLatest(db);
    const { workspaceId } = await findOrSeedBenchWorkspace(db, log);
    await db.raw('ANALYZE campaign_day_rollups, recovery_time_day_rollups, cancel_session_day_rollups');
    const results: Record<string, { median: number; p99: number }> = {};
    results['stats (GET /api/v1/stats)'] = await timed(() => computeStats(db, workspaceId));
    for (const period of OVERVIEW_PERIODS) {
      results[`overview, ${period}`] = await timed(() => computeOverview(db, workspaceId, period));
    }
    log(
      table(
        Object.entries(results).map(([name, { median, p99 }]) => ({ read: name, 'median ms': median, 'p99 ms': p99 })),
      ),
    );
    const csv = await exportMemory(db, workspaceId);
    log(
      `campaigns CSV export: ${csv.rows} rows, ${csv.megabytes} MB in ${csv.seconds} s, peak RSS growth ${csv.peak_rss_growth_mb} MB`,
    );
    log(`report: ${await saveReport('insights', { calls, results, csv })}`);
  } finally {
    await db.destroy();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exitCode = 1;
});
