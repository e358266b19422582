/**
 * `npm run bench:processor`: ingestion of Stripe events (issue 15), with a baseline measured
 * in the same run.
 *
 *  1. accept: Stripe-signed `customer.created` events, each with its own id, POSTed as fast as
 *     autocannon can (50 connections) to the API's connection URL, and to a bare node:http
 *     server that only verifies the signature (bench/processor-baseline.ts): events/s accepted
 *     and p99 accept latency, and their ratio (target: accepted >= 0.7 of the baseline), with
 *     the CPU each side spent an event (its server, every PostgreSQL process, the load
 *     generator), read from /proc around the run: steadier than throughput on a shared machine;
 *  2. apply: how fast one worker process works through what was accepted (events/s applied);
 *  3. latency: events sent at a steady rate (200/s) for BENCH_SECONDS: time from sending to
 *     the event's applied_at, p50 and p99 (target: p99 < 1 s).
 * Prints a table and saves a JSON report under bench/results/.
 *
 * Environment: BENCH_DATABASE_URL (default .../retention_bench_processor, dropped and made
 * again at each run), REDIS_URL, BENCH_SECONDS (each phase, default 10), BENCH_RATE (default 200).
 */
import { randomBytes } from 'node:crypto';
import autocannon from 'autocannon';
import Stripe from 'stripe';
import { createDb, dropDatabase, ensureDatabase, migrateLatest } from '@retention/db';
import { connectProcessor, createWorkspace, OPERATOR } from '@retention/domain';
import { freePort, postgresCpuMs, processCpuMs, saveReport, startProcess, table, type Running } from './support.js';

const databaseUrl =
  process.env.BENCH_DATABASE_URL ?? 'postgres://postgres:postgres@127.0.0.1:5432/retention_bench_processor';
const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const seconds = Number(process.env.BENCH_SECONDS ?? 10);
const rate = Number(process.env.BENCH_RATE ?? 200);
const log = (line: string) => process.stdout.write(`${line}\n`);

const secretsKey = randomBytes(32);
const webhookSecret = `whsec_${randomBytes(24).toString('hex')}`;
const now = () => Math.floor(Date.now() / 1000);

function signedEvent(): { body: string; signature: string; id: string } {
  const suffix = randomBytes(8).toString('hex');
  const event = {
    id: `evt_${suffix}`,
    object: 'event',
    api_version: '2024-06-20',
    created: now(),
    type: 'customer.created',
    livemode: false,
    pending_webhooks: 1,
    request: { id: null, idempotency_key: null },
    data: {
      object: {
        id: `cus_${suffix}`,
        object: 'customer',
        created: now(),
        email: `jenny.${suffix}@example.com`,
        name: 'Jenny Rosen',
        metadata: { tags: 'bench' },
        invoice_settings: { default_payment_method: null },
      },
    },
  };
  const body = JSON.stringify(event);
  return {
    body,
    id: event.id,
    signature: Stripe.webhooks.generateTestHeaderString({ payload: body, secret: webhookSecret }),
  };
}

interface Hammered {
  perSecond: number;
  p99: number;
  non2xx: number;
  total: number;
  /** CPU a request, in µs: the server's, every Postgres process's, and the load generator's. */
  cpuUs: { server: number | null; postgres: number | null; load: number };
}

async function hammer(url: string, serverPid: number | undefined): Promise<Hammered> {
  const before = { server: processCpuMs(serverPid), postgres: postgresCpuMs(), load: process.cpuUsage() };
  const result = await autocannon({
    url,
    method: 'POST',
    connections: 50,
    duration: seconds,
    requests: [
      {
        method: 'POST',
        setupRequest: (request) => {
          const { body, signature } = signedEvent();
          return { ...request, body, headers: { 'content-type': 'application/json', 'stripe-signature': signature } };
        },
      },
    ],
  });
  const perRequest = (ms: number | null, earlier: number | null) =>
    ms === null || earlier === null ? null : Math.round(((ms - earlier) * 1000) / result.requests.total);
  const load = process.cpuUsage(before.load);
  return {
    perSecond: result.requests.average,
    p99: result.latency.p99,
    non2xx: result.non2xx + result.errors + result.timeouts,
    total: result.requests.total,
    cpuUs: {
      server: perRequest(processCpuMs(serverPid), before.server),
      postgres: perRequest(postgresCpuMs(), before.postgres),
      load: Math.round((load.user + load.system) / result.requests.total),
    },
  };
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;
}

async function main(): Promise<void> {
  await dropDatabase(databaseUrl);
  await ensureDatabase(databaseUrl);
  const db = createDb(databaseUrl, { poolMax: 4 });
  const processes: Running[] = [];
  try {
    await migrateLatest(db, { secretsKey });
    const workspace = await createWorkspace(db, { name: 'Bench', processor: 'disconnected' });
    const connection = await connectProcessor(
      db,
      secretsKey,
      { workspace_id: workspace.id, provider: 'stripe', webhook_secret: webhookSecret },
      'none',
      OPERATOR,
    );
    // Fixed, like bench:api's (3910, 3911): a benchmark machine has them free.
    const [apiPort, baselinePort] = [await freePort(), await freePort()];
    const env = {
      DATABASE_URL: databaseUrl,
      REDIS_URL: redisUrl,
      REDIS_KEY_PREFIX: `bench-processor-${randomBytes(3).toString('hex')}`,
      SECRETS_KEY: secretsKey.toString('base64'),
      LOG_LEVEL: 'info',
      WORKER_PORT: '0',
    };
    const baseline = await startProcess(
      'bench/processor-baseline.ts',
      { PORT: String(baselinePort), BENCH_WEBHOOK_SECRET: webhookSecret },
      /baseline listening/,
    );
    processes.push(baseline);
    const api = await startProcess('services/api/src/main.ts', { ...env, PORT: String(apiPort) }, /API listening/);
    processes.push(api);
    const url = `http://127.0.0.1:${apiPort}/processor/stripe/${connection.id}`;

    log(`accept: ${seconds} s of signed events at full speed, API (worker not yet running), then the baseline`);
    const accepted = await hammer(url, api.child.pid);
    const base = await hammer(`http://127.0.0.1:${baselinePort}/`, baseline.child.pid);
    await baseline.stop();

    log('apply: one worker process works through the backlog');
    const backlog = Number((await db('processor_events').count({ n: '*' }))[0]!.n);
    const applyStarted = Date.now();
    const worker = await startProcess('services/worker/src/main.ts', env, /worker started/);
    processes.push(worker);
    for (;;) {
      const pending = Number((await db('processor_events').where({ state: 'pending' }).count({ n: '*' }))[0]!.n);
      if (pending === 0) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const appliedPerSecond = backlog / ((Date.now() - applyStarted) / 1000);

    log(`latency: ${rate} events/s for ${seconds} s, send to applied`);
    const sentAt = new Map<string, number>();
    const sends: Promise<unknown>[] = [];
    const total = rate * seconds;
    const started = Date.now();
    for (let index = 0; index < total; index += 1) {
      const due = started + (index * 1000) / rate;
      const wait = due - Date.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      const { body, signature, id } = signedEvent();
      sentAt.set(id, Date.now());
      sends.push(
        fetch(url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'stripe-signature': signature },
          body,
        }),
      );
    }
    await Promise.all(sends);
    const ids = [...sentAt.keys()];
    for (;;) {
      const pending = Number(
        (await db('processor_events').whereIn('psp_event_id', ids).where({ state: 'pending' }).count({ n: '*' }))[0]!.n,
      );
      if (pending === 0) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const rows: Array<{ psp_event_id: string; applied_at: Date }> = await db('processor_events')
      .whereIn('psp_event_id', ids)
      .select('psp_event_id', 'applied_at');
    const toApplied = rows.map((row) => row.applied_at.getTime() - sentAt.get(row.psp_event_id)!);

    const report = {
      accept: { api: accepted, baseline: base, ratio: accepted.perSecond / base.perSecond },
      apply: { backlog, perSecond: appliedPerSecond },
      latency: { rate, events: total, p50: percentile(toApplied, 50), p99: percentile(toApplied, 99) },
    };
    log(
      table([
        {
          measure: 'accepted events/s',
          value: Math.round(accepted.perSecond),
          baseline: Math.round(base.perSecond),
          ratio: report.accept.ratio.toFixed(2),
          target: '>= 0.7',
        },
        { measure: 'accept p99 (ms)', value: accepted.p99, baseline: base.p99, ratio: '', target: '' },
        ...(['server', 'postgres', 'load'] as const).map((part) => ({
          measure: `  CPU an event, ${part === 'load' ? 'load generator' : part} (µs)`,
          value: accepted.cpuUs[part] ?? '',
          baseline: base.cpuUs[part] ?? '',
          ratio: '',
          target: '',
        })),
        {
          measure: 'refused or failed requests',
          value: accepted.non2xx,
          baseline: base.non2xx,
          ratio: '',
          target: '0',
        },
        {
          measure: 'applied events/s (1 worker)',
          value: Math.round(appliedPerSecond),
          baseline: '',
          ratio: '',
          target: '',
        },
        {
          measure: `send to applied p50 at ${rate}/s (ms)`,
          value: report.latency.p50,
          baseline: '',
          ratio: '',
          target: '',
        },
        {
          measure: `send to applied p99 at ${rate}/s (ms)`,
          value: report.latency.p99,
          baseline: '',
          ratio: '',
          target: '< 1000',
        },
      ]),
    );
    log(`report: ${await saveReport('processor', report)}`);
  } finally {
    for (const running of processes.reverse()) await running.stop();
    await db.destroy();
  }
}

await main();
