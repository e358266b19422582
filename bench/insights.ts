/**
 * `npm run bench:insights`: the dashboard overview's data on the API bench's workspace
 * (1,000,000 campaigns, 200,000 cancel sessions; seeded once by bench/api.ts's seeder, reused).
 *
 * 1. Calls the overview read model (`computeOverview`, what GET /dashboard/api/overview serves)
 *    for each period one call at a time, BENCH_INSIGHT_CALLS times (default 200) after a
 *    warm-up, beside `computeStats` (GET /api/v1/stats), and prints the median and p99 in
 *    milliseconds. The target (docs/performance.md): the overview's data under 150 ms median.
 * 2. Streams the 1M-row campaigns CSV export and reports its memory.
 * 3. Drives every dashboard API route a page calls to render over HTTP against an API process,
 *    with autocannon at 50 connections, each with a session cookie of its own (50 sessions of
 *    bench users, made through the domain functions), and prints p50/p99 per route against the
 *    target: p99 under 100 ms (dashboard.md, "Speed").
 *
 * Environment: BENCH_DATABASE_URL and REDIS_URL as bench/api.ts; BENCH_SECONDS (load per route,
 * default 10); BENCH_INSIGHTS_PARTS (comma-separated of `overview`, `export`, `http`; default
 * all); BENCH_ONLY (the HTTP routes whose name contains this text).
 */
import { performance } from 'node:perf_hooks';
import { Writable } from 'node:stream';
import { randomBytes } from 'node:crypto';
import { loadConfig } from '@retention/core';
import {
  CAMPAIGN_EXPORT_COLUMNS,
  CAMPAIGN_SORTS,
  campaignListQuery,
  computeOverview,
  computeStats,
  createDb,
  encodeOpaqueCursor,
  ensureDatabase,
  listScope,
  migrateLatest,
  OVERVIEW_PERIODS,
  type Db,
} from '@retention/db';
import { acceptInvitation, createSession, inviteMember, OPERATOR } from '@retention/domain';
import { writeCsvPages } from '../services/api/src/dashboard/insights-export.js';
import { cookieSettings } from '../services/api/src/dashboard/session-cookie.js';
import { findOrSeedBenchWorkspace } from './seed-api-bench.js';
import { benchSecretsKey, load, processCpuMs, saveReport, startProcess, table, type LoadResult } from './support.js';

/** The custom period measured: the 60 UTC days before today (a quarter-like range a finance user picks). */
const BENCH_RANGE = {
  from: new Date(Date.now() - 60 * 86_400_000).toISOString().slice(0, 10),
  to: new Date(Date.now() - 86_400_000).toISOString().slice(0, 10),
};

const databaseUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres:postgres@127.0.0.1:5432/retention_bench';
const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const calls = Number(process.env.BENCH_INSIGHT_CALLS ?? 200);
const seconds = Number(process.env.BENCH_SECONDS ?? 10);
const parts = new Set((process.env.BENCH_INSIGHTS_PARTS ?? 'overview,export,http').split(','));
const CONNECTIONS = 50;
/** dashboard.md, "Speed": every route a page calls to render. */
const P99_TARGET_MS = 100;
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
 * writer (keyset pages, cells, csv-stringify) into a sink: rows, bytes, seconds and the peak RSS
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
    await writeCsvPages(
      new Writable({
        write(chunk: Buffer, _encoding, done) {
          bytes += chunk.length;
          for (const byte of chunk) if (byte === 10) rows += 1;
          done();
        },
      }),
      { query: () => campaignListQuery(db, workspaceId, {}), order: CAMPAIGN_SORTS.order({}), idColumn: 'k.id' },
      CAMPAIGN_EXPORT_COLUMNS,
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
  const report: Record<string, unknown> = { calls, seconds, connections: CONNECTIONS };
  try {
    await migrateLatest(db, { secretsKey: benchSecretsKey() });
    const { workspaceId } = await findOrSeedBenchWorkspace(db, log);
    if (parts.has('overview')) {
      await db.raw(
        `ANALYZE campaign_day_rollups, recovery_time_day_rollups, cancel_session_day_rollups, decline_code_day_rollups,
           campaign_close_day_rollups`,
      );
      const results: Record<string, { median: number; p99: number }> = {};
      results['stats (GET /api/v1/stats)'] = await timed(() => computeStats(db, workspaceId));
      for (const period of OVERVIEW_PERIODS) {
        const range = period === 'custom' ? BENCH_RANGE : undefined;
        results[`overview, ${period}`] = await timed(() => computeOverview(db, workspaceId, period, new Date(), range));
      }
      log(
        table(
          Object.entries(results).map(([name, { median, p99 }]) => ({
            read: name,
            'median ms': median,
            'p99 ms': p99,
          })),
        ),
      );
      report.results = results;
    }
    if (parts.has('export')) {
      const csv = await exportMemory(db, workspaceId);
      log(
        `campaigns CSV export: ${csv.rows} rows, ${csv.megabytes} MB in ${csv.seconds} s, peak RSS growth ${csv.peak_rss_growth_mb} MB`,
      );
      report.csv = csv;
    }
    if (parts.has('http')) report.http = await dashboardRoutes(db, workspaceId);
    log(`report: ${await saveReport('insights', report)}`);
  } finally {
    await db.destroy();
  }
}

const BENCH_USERS = 5;

/**
 * CONNECTIONS live sessions of BENCH_USERS users of the bench workspace (an owner and members),
 * made as the dashboard makes them: an invitation accepted (once; later runs reuse the users),
 * then a session per connection. Returns the cookie values.
 */
async function benchSessions(db: Db, workspaceId: string): Promise<string[]> {
  const config = loadConfig({
    SECRETS_KEY: randomBytes(32).toString('base64'),
    ...process.env,
    DATABASE_URL: databaseUrl,
  });
  const users: Array<{ id: string }> = [];
  for (let n = 1; n <= BENCH_USERS; n += 1) {
    const email = `dashboard-bench-${n}@bench.test`;
    let user = await db('users').where({ workspace_id: workspaceId, email }).first<{ id: string } | undefined>('id');
    if (!user) {
      const { token } = await inviteMember(
        db,
        {
          workspace_id: workspaceId,
          email,
          role: n === 1 ? 'owner' : 'member',
          inviter_role: null,
          base_url: config.baseUrl,
        },
        OPERATOR,
      );
      user = await acceptInvitation(db, token, { name: `Bench ${n}`, password: randomBytes(18).toString('base64url') });
    }
    users.push(user);
  }
  const lifetimes = { idleMs: config.sessionIdleTimeoutMs, maxAgeMs: config.sessionMaxAgeMs };
  const cookies: string[] = [];
  for (let i = 0; i < CONNECTIONS; i += 1) {
    const { value } = await createSession(
      db,
      { user_id: users[i % users.length]!.id, workspace_id: workspaceId, user_agent: 'bench:insights' },
      lifetimes,
    );
    cookies.push(value);
  }
  return cookies;
}

/**
 * Every dashboard API route a page calls to render, over HTTP at CONNECTIONS connections, one
 * session cookie per connection: p50 and p99 per route, against P99_TARGET_MS.
 */
async function dashboardRoutes(db: Db, workspaceId: string) {
  const deep = await db('recovery_campaigns')
    .where({ workspace_id: workspaceId })
    .orderBy([
      { column: 'first_failed_at', order: 'desc' },
      { column: 'id', order: 'desc' },
    ])
    .offset(500_000)
    .first<{ id: string; first_failed_at: Date; customer_id: string; psp_invoice_id: string }>(
      'id',
      'first_failed_at',
      'customer_id',
      'psp_invoice_id',
    );
  const session = await db('cancel_sessions')
    .where({ workspace_id: workspaceId })
    .orderBy('created_at', 'desc')
    .offset(100_000)
    .first<{ id: string } | undefined>('id');
  if (!deep || !session) throw new Error('the benchmark workspace has no campaigns or cancel sessions');
  const customer = await db('customers')
    .where({ id: deep.customer_id })
    .first<{ email: string; name: string }>('email', 'name');
  // Searches by part of a name or email (docs/dashboard-api.md, "Text filters"): the bench's
  // customers are `customer<n>@bench.test`, named `Customer <n>`. Part of the deep campaign's
  // customer's name ("omer 12345": it and the customers whose number goes on, at most 111), one
  // every customer matches (all 200,000), one that matches none, and 1,111 customers that are
  // the oldest (numbers 199, 1990-1999, 19900-19999, 199000-199999), the newest-first walk's worst.
  const fewName = encodeURIComponent(customer.name.slice(4).toUpperCase());
  // A week of cancel sessions a month ago (about 4,000 of the 200,000, one every 150 s).
  const day = (daysAgo: number) => new Date(Date.now() - daysAgo * 86_400_000).toISOString().slice(0, 10);
  const [weekFrom, weekTo] = [day(30), day(23)];
  // The cursor the list hands out after row 500,000 (made here as the list makes it).
  const deepCursor = encodeOpaqueCursor(deep.first_failed_at, deep.id, listScope('campaigns', {}));
  const cookies = await benchSessions(db, workspaceId);

  const only = process.env.BENCH_ONLY;
  const routes = [
    { name: 'me', path: '/me' },
    ...OVERVIEW_PERIODS.map((period) => ({
      name: `overview ${period}`,
      path: `/overview?period=${period}${period === 'custom' ? `&from=${BENCH_RANGE.from}&to=${BENCH_RANGE.to}` : ''}`,
    })),
    { name: 'campaigns, first page', path: '/campaigns' },
    { name: 'campaigns, status=lost', path: '/campaigns?status=lost' },
    {
      name: 'campaigns, decline_category=card_update_required',
      path: '/campaigns?decline_category=card_update_required',
    },
    { name: 'campaigns, decline_category=fraud (no rows)', path: '/campaigns?decline_category=fraud' },
    { name: 'campaigns, page at row 500,000', path: `/campaigns?cursor=${deepCursor}` },
    { name: 'campaigns, q=customer email', path: `/campaigns?q=${encodeURIComponent(customer.email)}` },
    { name: 'campaigns, q=invoice id', path: `/campaigns?q=${encodeURIComponent(deep.psp_invoice_id)}` },
    { name: 'campaigns, q=part of a name (a few customers)', path: `/campaigns?q=${fewName}` },
    { name: 'campaigns, q=@bench (every customer)', path: '/campaigns?q=%40bench' },
    { name: 'campaigns, q=er199 (1,111 oldest customers)', path: '/campaigns?q=er199' },
    // The start of an invoice id (`in_5000`: 112 invoices; migration 0042).
    {
      name: 'campaigns, q=start of an invoice id',
      path: `/campaigns?q=${encodeURIComponent(deep.psp_invoice_id.slice(0, 7))}`,
    },
    // Sorted (docs/dashboard-api.md, "Sorting"; the amount orders read 0043's indexes).
    { name: 'campaigns, sort=-amount', path: '/campaigns?sort=-amount' },
    { name: 'campaigns, sort=amount&status=lost', path: '/campaigns?sort=amount&status=lost' },
    { name: 'campaigns, sort=first_failed_at', path: '/campaigns?sort=first_failed_at' },
    { name: 'customers, first page', path: '/customers' },
    { name: 'customers, q=part of a name (a few)', path: `/customers?q=${fewName}` },
    { name: 'customers, q=@bench (all 200,000)', path: '/customers?q=%40bench' },
    { name: 'customers, q=nobody here (none)', path: '/customers?q=nobody%20here' },
    { name: 'customers, q=er199 (1,111 oldest)', path: '/customers?q=er199' },
    { name: 'cancel sessions, first page', path: '/cancel_sessions' },
    { name: 'cancel sessions, sort=-monthly_mrr', path: '/cancel_sessions?sort=-monthly_mrr' },
    {
      name: 'cancel sessions, reason_code=customer_service (no rows)',
      path: '/cancel_sessions?reason_code=customer_service',
    },
    { name: 'cancel sessions, a week (from, to)', path: `/cancel_sessions?from=${weekFrom}&to=${weekTo}` },
    { name: 'cancel sessions, q=part of a name (a few)', path: `/cancel_sessions?q=${fewName}` },
    { name: 'cancel sessions, q=@bench (every customer)', path: '/cancel_sessions?q=%40bench' },
    { name: 'cancel sessions, q=er199 (1,111 oldest)', path: '/cancel_sessions?q=er199' },
    { name: 'count of cancel sessions, q=er199', path: '/cancel_sessions/count?q=er199' },
    // How many match (the page asks it beside a list's first page when that is not the whole list).
    { name: 'count of campaigns, first page', path: '/campaigns/count' },
    { name: 'count of campaigns, status=lost', path: '/campaigns/count?status=lost' },
    { name: 'count of customers, first page', path: '/customers/count' },
    { name: 'count of cancel sessions, first page', path: '/cancel_sessions/count' },
    { name: 'campaign detail', path: `/campaigns/${deep.id}` },
    { name: 'customer detail', path: `/customers/${deep.customer_id}` },
    { name: 'cancel session detail', path: `/cancel_sessions/${session.id}` },
  ].filter((route) => !only || route.name.includes(only));

  const port = 3912;
  const cookieName = cookieSettings('http://localhost:3000').name;
  const api = await startProcess(
    'services/api/src/main.ts',
    {
      DATABASE_URL: databaseUrl,
      REDIS_URL: redisUrl,
      REDIS_KEY_PREFIX: `bench-${Date.now()}`,
      LOG_LEVEL: 'info',
      PORT: String(port),
      API_INTERNAL_PORT: '0',
    },
    /API listening/,
  );
  const results: Record<string, LoadResult> = {};
  /** The API process's CPU per request in ms (Postgres's not counted). */
  const cpuPerRequest: Record<string, number> = {};
  try {
    for (const route of routes) {
      const url = `http://127.0.0.1:${port}/dashboard/api${route.path}`;
      const perConnection = (index: number) => ({ cookie: `${cookieName}=${cookies[index]!}` });
      await load(url, {}, 2, CONNECTIONS, perConnection); // warm-up: JIT, pool, Postgres buffers
      const cpuBefore = processCpuMs(api.child.pid);
      results[route.name] = await load(url, {}, seconds, CONNECTIONS, perConnection);
      const cpuAfter = processCpuMs(api.child.pid);
      const { p50, p99, non2xx, requests } = results[route.name]!;
      if (cpuBefore !== null && cpuAfter !== null && requests > 0) {
        cpuPerRequest[route.name] = Math.round(((cpuAfter - cpuBefore) / requests) * 1000) / 1000;
      }
      log(`  ${route.name}: p50 ${p50} ms, p99 ${p99} ms${non2xx ? `, ${non2xx} non-2xx` : ''}`);
    }
  } finally {
    await api.stop();
  }
  log('');
  log(`dashboard API over HTTP, ${CONNECTIONS} connections (one session each), ${seconds} s per route:`);
  log(
    table(
      routes.map(({ name }) => {
        const result = results[name]!;
        return {
          route: name,
          'req/s': Math.round(result.requestsPerSecond),
          'p50 ms': result.p50,
          'p99 ms': result.p99,
          [`p99 < ${P99_TARGET_MS} ms`]: result.p99 < P99_TARGET_MS ? 'yes' : 'NO',
          'API CPU ms/req': cpuPerRequest[name] ?? '-',
          'non-2xx': result.non2xx + result.errors,
        };
      }),
    ),
  );
  return { results, cpuPerRequest };
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exitCode = 1;
});
