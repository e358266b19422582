/**
 * `npm run bench:webhooks`: the delivery worker against a local HTTPS receiver, with a
 * baseline measured in the same run.
 *
 *  1. throughput: N events already in the outbox, one worker process started: deliveries/s
 *     until the receiver has them all; to one endpoint, and spread over ten;
 *  2. latency: events committed at a steady rate (200/s) to one healthy endpoint: time from
 *     the event's commit to its arrival at the receiver, p50 and p99;
 *  3. isolation: the same, while endpoints that never answer (BENCH_HANGING of them, default
 *     10: as many as it takes to fill every slot at 10 each) have a backlog of 2,000
 *     deliveries between them: the healthy endpoint's p99 next to its p99 alone;
 *  4. Redis memory: BENCH_MEMORY_BACKLOG (default 200,000) deliveries pending for one endpoint
 *     that never answers, on a redis-server of the bench's own (the shared one's memory moves
 *     with others' work): INFO memory's used_memory once they are all dispatched, next to the
 *     same server idle before the worker started;
 *  5. baseline: a plain loop of signed got POSTs at the worker's concurrency (no queue, no
 *     database), for the throughput ratios.
 * Prints a table with the targets of issue 16 and saves a JSON report under bench/results/.
 *
 * Environment: BENCH_DATABASE_URL (default .../retention_bench_webhooks, a database of its own,
 * dropped and made again at each run: deliveries an earlier run left pending, such as the
 * hanging endpoints' backlog, would otherwise be swept into this run's workers and compete),
 * REDIS_URL, BENCH_EVENTS (throughput events, default 20000), BENCH_SECONDS (each latency
 * run, default 20), BENCH_RATE (events/s, default 200), BENCH_HANGING (hanging endpoints in
 * the isolation run, default 10), BENCH_MEMORY_BACKLOG (default 200000; 0 skips the memory
 * run), BENCH_WORKER_LOG_LEVEL (default info).
 */
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { createServer, type AddressInfo } from 'node:net';
import path from 'node:path';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import type { EventData, EventType } from '@retention/core';
import { MAX_WEBHOOK_ENDPOINTS } from '@retention/core/webhook-endpoints';
import { createDb, dropDatabase, ensureDatabase, migrateLatest, type Db } from '@retention/db';
import { createEndpoint, createUser, createWorkspace, recordEvent, recordEvents } from '@retention/domain';
import { createTestCertificate } from '../services/worker/test/support/certificate.js';
import { benchSecretsKey, ROOT, saveReport, startProcess, table, type Running } from './support.js';

const databaseUrl =
  process.env.BENCH_DATABASE_URL ?? 'postgres://postgres:postgres@127.0.0.1:5432/retention_bench_webhooks';
const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const events = Number(process.env.BENCH_EVENTS ?? 20_000);
const seconds = Number(process.env.BENCH_SECONDS ?? 20);
const rate = Number(process.env.BENCH_RATE ?? 200);
const hangingEndpoints = Number(process.env.BENCH_HANGING ?? 10);
// The hanging endpoints share a workspace with the healthy one, which holds at most this many.
if (!(hangingEndpoints >= 1 && hangingEndpoints < MAX_WEBHOOK_ENDPOINTS))
  throw new Error(
    `BENCH_HANGING must be 1 to ${MAX_WEBHOOK_ENDPOINTS - 1}: a workspace has at most ${MAX_WEBHOOK_ENDPOINTS} endpoints`,
  );
const memoryBacklog = Number(process.env.BENCH_MEMORY_BACKLOG ?? 200_000);
const workerLogLevel = process.env.BENCH_WORKER_LOG_LEVEL ?? 'info';
const log = (line: string) => process.stdout.write(`${line}\n`);

/** The worker's defaults (services/worker/src/worker.ts): the baseline runs at the same concurrency. */
const WORKER_CONCURRENCY = 100;
const PER_ENDPOINT = 10;
const HANGING_TIMEOUT_MS = 60_000;
/** Deliveries queued for the hanging endpoints, all together. */
const HANGING_BACKLOG = 2_000;

/** The receiver's certificate, which the worker and the baseline trust through NODE_EXTRA_CA_CERTS. */
const certificate = await createTestCertificate();
const { certPath, keyPath } = certificate;

/** Arrival times at the receiver, by event id, and counts by path. */
const arrivals = new Map<string, number>();
const arrivalsByPath = new Map<string, number>();

function startReceiver(): Promise<{ child: ChildProcess; port: number }> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'bench/webhook-receiver.ts')], {
    cwd: ROOT,
    env: { ...process.env, CERT_PATH: certPath, KEY_PATH: keyPath },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  return new Promise((resolve, reject) => {
    child.on('message', (message: { port?: number; arrivals?: Array<[string, string, number]> }) => {
      if (message.port) resolve({ child, port: message.port });
      for (const [arrivalPath, id, at] of message.arrivals ?? []) {
        arrivals.set(id, at);
        arrivalsByPath.set(arrivalPath, (arrivalsByPath.get(arrivalPath) ?? 0) + 1);
      }
    });
    child.once('exit', (code) => reject(new Error(`the receiver exited with ${code}`)));
  });
}

async function until(check: () => boolean | Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

interface Scene {
  workspaceId: string;
  urls: string[];
  paths: string[];
}

async function scene(db: Db, port: number, paths: string[], types: EventType[][] = []): Promise<Scene> {
  const workspace = await createWorkspace(db, { name: `bench ${randomBytes(3).toString('hex')}` });
  const owner = await createUser(db, {
    workspace_id: workspace.id,
    email: `owner-${randomBytes(4).toString('hex')}@bench.test`,
    role: 'owner',
  });
  const urls = paths.map((endpointPath) => `https://localhost:${port}${endpointPath}`);
  for (const [index, url] of urls.entries()) {
    await createEndpoint(db, benchSecretsKey(), {
      workspace_id: workspace.id,
      actor_id: owner.id,
      name: paths[index]!,
      url,
      ...(types[index] && { events: types[index] }),
    });
  }
  return { workspaceId: workspace.id, urls, paths };
}

const reactivation = (id: string): EventData<'reactivation.sent'> => ({
  reactivation_id: id,
  customer_email: 'ann@bench.test',
  subscription_id: randomUUID(),
});
const reminder = (id: string): EventData<'trial.reminder_sent'> => ({
  reminder_id: id,
  customer_email: 'ann@bench.test',
  subscription_id: randomUUID(),
  trial_end: '2026-06-01T00:00:00.000Z',
});

async function fillOutbox(db: Db, workspaceId: string, count: number): Promise<void> {
  for (let done = 0; done < count; done += 1_000) {
    await db.transaction(async (trx) => {
      for (let index = done; index < Math.min(count, done + 1_000); index += 1) {
        await recordEvent(trx, workspaceId, 'reactivation.sent', reactivation(randomUUID()));
      }
    });
  }
}

/** Drops the bench database, if there is one, and creates it empty. */
async function recreateDatabase(url: string): Promise<void> {
  const name = decodeURIComponent(new URL(url).pathname.slice(1));
  // A guard against a BENCH_DATABASE_URL pointed at data that matters.
  if (!name.includes('bench')) throw new Error(`BENCH_DATABASE_URL must name a bench database, not "${name}"`);
  await dropDatabase(url);
  await ensureDatabase(url);
}

function startWorker(prefix: string, extraEnv: Record<string, string> = {}): Promise<Running> {
  return startProcess(
    'services/worker/src/main.ts',
    {
      DATABASE_URL: databaseUrl,
      REDIS_URL: redisUrl,
      REDIS_KEY_PREFIX: prefix,
      WORKER_PORT: '0',
      NODE_EXTRA_CA_CERTS: certPath,
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
      LOG_LEVEL: workerLogLevel,
      ...extraEnv,
    },
    /worker started/,
  );
}

/**
 * Deliveries per second over the whole run, and in each second from the worker's start: a
 * backlog sorted before delivery starts (parking, before issue 16) shows as slow first seconds.
 */
async function throughput(db: Db, port: number, endpointCount: number, prefix: string) {
  const paths = Array.from({ length: endpointCount }, (_, index) => `/throughput-${endpointCount}-${index}`);
  const { workspaceId } = await scene(db, port, paths);
  log(`throughput, ${endpointCount} endpoint(s): filling the outbox with ${events / endpointCount} events`);
  await fillOutbox(db, workspaceId, events / endpointCount);
  const delivered = () => paths.reduce((sum, endpointPath) => sum + (arrivalsByPath.get(endpointPath) ?? 0), 0);
  const worker = await startWorker(prefix);
  const started = Date.now();
  const perSecond: number[] = [];
  let counted = 0;
  const sampler = setInterval(() => {
    const now = delivered();
    perSecond.push(now - counted);
    counted = now;
  }, 1_000);
  try {
    await until(() => delivered() >= events, 600_000, `${events} deliveries`);
  } finally {
    clearInterval(sampler);
  }
  const elapsed = (Date.now() - started) / 1000;
  await worker.stop();
  return { deliveriesPerSecond: events / elapsed, perSecond };
}

/** Commits one event every 1/rate s for `seconds`; returns commit-to-arrival latencies. */
async function steadyLatencies(db: Db, workspaceId: string, type: 'reactivation.sent' | 'trial.reminder_sent') {
  const committed = new Map<string, number>();
  const writes: Array<Promise<void>> = [];
  const started = Date.now();
  const total = Math.round(seconds * rate);
  for (let index = 0; index < total; index += 1) {
    const due = started + (index * 1000) / rate;
    const wait = due - Date.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    const id = randomUUID();
    writes.push(
      db
        .transaction(async (trx) => {
          if (type === 'reactivation.sent') await recordEvent(trx, workspaceId, type, reactivation(id));
          else await recordEvent(trx, workspaceId, type, reminder(id));
        })
        .then(() => {
          committed.set(id, Date.now());
        }),
    );
  }
  await Promise.all(writes);
  await until(() => [...committed.keys()].every((id) => arrivals.has(id)), 120_000, 'the steady events');
  return [...committed].map(([id, at]) => arrivals.get(id)! - at).sort((a, b) => a - b);
}

const quantile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))]!;

async function latencies(db: Db, receiver: ChildProcess, port: number, prefix: string) {
  const hangingPaths = Array.from({ length: hangingEndpoints }, (_, index) => `/hang-${index}`);
  const { workspaceId } = await scene(
    db,
    port,
    ['/healthy', ...hangingPaths],
    [['trial.reminder_sent'], ...hangingPaths.map((): EventType[] => ['reactivation.sent'])],
  );
  const worker = await startWorker(prefix, { WEBHOOK_TIMEOUT_MS: String(HANGING_TIMEOUT_MS) });
  try {
    log(`latency: warming up, then ${seconds} s at ${rate} events/s`);
    await steadyLatencies(db, workspaceId, 'trial.reminder_sent').catch(() => undefined);
    const alone = await steadyLatencies(db, workspaceId, 'trial.reminder_sent');

    log(`isolation: a backlog of ${HANGING_BACKLOG} deliveries for ${hangingEndpoints} endpoints that never answer`);
    const backlogEvents = Math.ceil(HANGING_BACKLOG / hangingEndpoints);
    await fillOutbox(db, workspaceId, backlogEvents);
    // BullMQ leaves a connection it was handed open on close(): it is quit below.
    const connection = new Redis(redisUrl, { maxRetriesPerRequest: null });
    const queue = new Queue('webhook-deliveries', { connection, prefix });
    try {
      await until(
        async () =>
          Number(
            await db('event_outbox')
              .count({ n: '*' })
              .first()
              .then((row) => row?.n),
          ) === 0,
        60_000,
        'the backlog to be dispatched',
      );
      // Sorted: the backlog waits in Postgres, and Redis holds only each hanging endpoint's
      // probe, in flight. (An empty wait list alone is no sign: it is also empty before the
      // jobs are released.)
      await until(
        async () => (await queue.getWaitingCount()) === 0 && (await queue.getActiveCount()) >= hangingEndpoints,
        60_000,
        'the hanging endpoints to be probed',
      );
    } finally {
      await queue.close();
      await connection.quit();
    }
    log(`isolation: ${seconds} s at ${rate} events/s to the healthy endpoint`);
    const beside = await steadyLatencies(db, workspaceId, 'trial.reminder_sent');
    return { alone, beside };
  } finally {
    receiver.send({ releaseHanging: true });
    await worker.stop();
  }
}

/** INFO memory's used_memory, in bytes. */
async function usedMemory(redis: Redis): Promise<number> {
  const info = await redis.info('memory');
  return Number(/^used_memory:(\d+)/m.exec(info)?.[1]);
}

/**
 * Redis memory with a big backlog for one endpoint that never answers: the deliveries are
 * committed, then a worker dispatches them on a redis-server of its own; used_memory is read
 * idle (before the worker), then every 100 ms until 15 s after the last event was
 * dispatched, and the largest reading is kept.
 */
async function redisMemory(db: Db, receiver: ChildProcess, port: number, prefix: string) {
  const redisPort = await new Promise<number>((resolve) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const { port: free } = probe.address() as AddressInfo;
      probe.close(() => resolve(free));
    });
  });
  const server = spawn(
    'redis-server',
    ['--port', String(redisPort), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    { stdio: 'ignore' },
  );
  const url = `redis://127.0.0.1:${redisPort}`;
  const redis = new Redis(url, { maxRetriesPerRequest: null, retryStrategy: () => 50 });
  redis.on('error', () => undefined); // refused until the server listens
  let worker: Running | undefined;
  try {
    await until(async () => (await redis.ping().catch(() => '')) === 'PONG', 10_000, 'the private redis-server');
    const { workspaceId } = await scene(db, port, ['/hang-memory']);
    log(`memory: ${memoryBacklog} events for one endpoint that never answers`);
    for (let done = 0; done < memoryBacklog; done += 5_000) {
      const batch = Array.from({ length: Math.min(5_000, memoryBacklog - done) }, () => ({
        workspaceId,
        type: 'reactivation.sent' as const,
        data: reactivation(randomUUID()),
      }));
      await db.transaction((trx) => recordEvents(trx, batch));
    }
    const idle = await usedMemory(redis);
    worker = await startWorker(prefix, { REDIS_URL: url, WEBHOOK_TIMEOUT_MS: String(HANGING_TIMEOUT_MS) });
    const started = Date.now();
    let peak = idle;
    const sample = async () => {
      peak = Math.max(peak, await usedMemory(redis));
    };
    await until(
      async () => {
        await sample();
        const row = await db('event_outbox').count({ n: '*' }).first();
        return Number(row?.n) === 0;
      },
      600_000,
      'the memory backlog to be dispatched',
    );
    const dispatchedAfter = (Date.now() - started) / 1000;
    const settleUntil = Date.now() + 15_000;
    while (Date.now() < settleUntil) {
      await sample();
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const settled = await usedMemory(redis);
    return { backlog: memoryBacklog, idle, peak, settled, dispatchedAfterSeconds: dispatchedAfter };
  } finally {
    receiver.send({ releaseHanging: true });
    await worker?.stop();
    redis.disconnect();
    server.kill();
  }
}

function baseline(urls: string[], concurrency: number): { rate: number; perSecond: number[] } {
  const output = execFileSync(process.execPath, ['--import', 'tsx', path.join(ROOT, 'bench/webhook-baseline.ts')], {
    cwd: ROOT,
    env: {
      ...process.env,
      NODE_EXTRA_CA_CERTS: certPath,
      BASELINE_URLS: urls.join(','),
      BASELINE_COUNT: String(events),
      BASELINE_CONCURRENCY: String(concurrency),
    },
    encoding: 'utf8',
  });
  const {
    deliveries,
    seconds: elapsed,
    perSecond,
  } = JSON.parse(output) as {
    deliveries: number;
    seconds: number;
    perSecond: number[];
  };
  return { rate: deliveries / elapsed, perSecond };
}

async function main(): Promise<void> {
  await recreateDatabase(databaseUrl);
  const db = createDb(databaseUrl, { poolMax: 20, statementTimeoutMs: 600_000 });
  await migrateLatest(db, { secretsKey: benchSecretsKey() });
  const receiver = await startReceiver();
  const prefix = `bench-webhooks-${Date.now()}`;
  try {
    const { deliveriesPerSecond: solo, perSecond: soloPerSecond } = await throughput(
      db,
      receiver.port,
      1,
      `${prefix}-1`,
    );
    const { deliveriesPerSecond: spread } = await throughput(db, receiver.port, 10, `${prefix}-10`);
    const { alone, beside } = await latencies(db, receiver.child, receiver.port, `${prefix}-latency`);
    const memory =
      memoryBacklog > 0 ? await redisMemory(db, receiver.child, receiver.port, `${prefix}-memory`) : undefined;
    log('baseline: plain signed got POSTs');
    const soloUrls = [`https://localhost:${receiver.port}/baseline-0`];
    const spreadUrls = Array.from({ length: 10 }, (_, index) => `https://localhost:${receiver.port}/baseline-${index}`);
    const { rate: soloBaseline, perSecond: soloBaselinePerSecond } = baseline(soloUrls, PER_ENDPOINT);
    const { rate: spreadBaseline } = baseline(spreadUrls, WORKER_CONCURRENCY);

    const report = {
      events,
      seconds,
      rate,
      worker: { concurrency: WORKER_CONCURRENCY, maxInFlightPerEndpoint: PER_ENDPOINT, logLevel: workerLogLevel },
      hangingEndpoints,
      throughput: {
        oneEndpoint: {
          deliveriesPerSecond: solo,
          baseline: soloBaseline,
          ratio: solo / soloBaseline,
          perSecond: soloPerSecond,
          baselinePerSecond: soloBaselinePerSecond,
        },
        tenEndpoints: { deliveriesPerSecond: spread, baseline: spreadBaseline, ratio: spread / spreadBaseline },
      },
      latencyMs: {
        alone: { p50: quantile(alone, 0.5), p99: quantile(alone, 0.99), max: quantile(alone, 1) },
        besideHanging: { p50: quantile(beside, 0.5), p99: quantile(beside, 0.99), max: quantile(beside, 1) },
      },
      redisMemory: memory,
    };
    const mb = (bytes: number) => (bytes / 1_048_576).toFixed(1);
    log('');
    log(
      table([
        {
          measure: 'deliveries/s, 1 endpoint (10 in flight)',
          value: Math.round(solo),
          baseline: Math.round(soloBaseline),
          ratio: (solo / soloBaseline).toFixed(2),
          target: '>= 0.50',
        },
        {
          measure: '  the same, first second / lowest second',
          value: `${soloPerSecond[0] ?? 0} / ${Math.min(...soloPerSecond)}`,
          baseline: Math.round(soloBaseline),
          ratio: `${((soloPerSecond[0] ?? 0) / soloBaseline).toFixed(2)} / ${(Math.min(...soloPerSecond) / soloBaseline).toFixed(2)}`,
          target: '>= 0.50 from the first second',
        },
        {
          // Context, not a target: the baseline's own first second against its whole run.
          measure: "  the baseline's own first second",
          value: soloBaselinePerSecond[0] ?? 0,
          baseline: Math.round(soloBaseline),
          ratio: ((soloBaselinePerSecond[0] ?? 0) / soloBaseline).toFixed(2),
          target: '',
        },
        {
          // Context, not a target: both first seconds, each process starting cold (its first
          // connections, V8 compiling its path), so the warm-up they share falls on both alike.
          measure: "  first second against the baseline's first second",
          value: soloPerSecond[0] ?? 0,
          baseline: soloBaselinePerSecond[0] ?? 0,
          ratio: ((soloPerSecond[0] ?? 0) / Math.max(1, soloBaselinePerSecond[0] ?? 0)).toFixed(2),
          target: '',
        },
        {
          measure: 'deliveries/s, 10 endpoints (100 in flight)',
          value: Math.round(spread),
          baseline: Math.round(spreadBaseline),
          ratio: (spread / spreadBaseline).toFixed(2),
          target: '>= 0.75',
        },
        {
          measure: `event -> first attempt p50 ms at ${rate}/s`,
          value: report.latencyMs.alone.p50,
          baseline: '',
          ratio: '',
          target: '',
        },
        {
          measure: `event -> first attempt p99 ms at ${rate}/s`,
          value: report.latencyMs.alone.p99,
          baseline: '',
          ratio: '',
          target: '< 50 ms',
        },
        {
          measure: `healthy p99 ms beside ${hangingEndpoints} hanging backlogs`,
          value: report.latencyMs.besideHanging.p99,
          baseline: report.latencyMs.alone.p99,
          ratio: (report.latencyMs.besideHanging.p99 / report.latencyMs.alone.p99).toFixed(2),
          target: '<= 1.50 x alone',
        },
        ...(memory
          ? [
              {
                measure: `Redis MB above idle, ${memory.backlog} pending for 1 hanging endpoint (peak / settled)`,
                value: `${mb(memory.peak - memory.idle)} / ${mb(memory.settled - memory.idle)}`,
                baseline: `${mb(memory.idle)} idle`,
                ratio: '',
                target: '<= 5 MB above idle',
              },
            ]
          : []),
      ]),
    );
    log(`report: ${await saveReport('webhooks', report)}`);
  } finally {
    receiver.child.kill();
    await db.destroy();
    await certificate.remove();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`bench:webhooks failed: ${error instanceof Error ? error.stack : String(error)}\n`);
  process.exitCode = 1;
});
