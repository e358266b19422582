import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  redisKeyPrefix,
  runId,
  startService,
  TEST_REDIS_URL,
  useTestDatabase,
  type ServiceProcess,
} from '@retention/testkit';
import { TcpProxy } from './support/tcp-proxy.js';

/**
 * PostgreSQL going away under a running worker process: every loop (processor events, the
 * outbox dispatch, the delivery scheduler, the sweeps, the backfills, LISTEN) fails on each
 * round. Unthrottled, that was dozens of lines a second, each with a stack; README ("Logs")
 * promises one warning per source per 10 s, with `held_back`, as for Redis. The outage is a
 * proxy of the test's own in front of the shared PostgreSQL, stopped and started again.
 */

const database = useTestDatabase();
let proxy: TcpProxy;

beforeAll(async () => {
  const url = new URL(database.current.url);
  proxy = await TcpProxy.start({ host: url.hostname, port: Number(url.port || 5432) });
});

afterAll(() => proxy.stop());

const OUTAGE_MS = 6_000;

function logLines(output: string): Array<Record<string, any>> {
  return output
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, any>);
}

describe('PostgreSQL going away under a worker', () => {
  let worker: ServiceProcess | undefined;
  afterAll(async () => {
    await worker?.stop();
  });

  it('logs one warning per source at most in 10 s, without stacks, and a line per source when it works again', async () => {
    worker = startService('services/worker/src/main.ts', {
      DATABASE_URL: proxy.through(database.current.url),
      REDIS_URL: TEST_REDIS_URL,
      REDIS_KEY_PREFIX: `${redisKeyPrefix(runId())}-postgres-outage`,
      WORKER_PORT: '0',
      LOG_LEVEL: 'info',
    });
    await worker.waitFor(/worker started/);
    const before = worker.output().length;

    await proxy.stop();
    await new Promise((resolve) => setTimeout(resolve, OUTAGE_MS));
    const during = worker.output().slice(before);
    await proxy.restart();

    const lines = logLines(during);
    const warnings = lines.filter((line) => line.level === 'warn' || line.level === 'error');
    // The processor's inbox alone was polled 8 times a second, each failure a line.
    expect(warnings.length).toBeGreaterThan(0);
    const bySource = new Map<unknown, number>();
    for (const line of warnings) bySource.set(line.source, (bySource.get(line.source) ?? 0) + 1);
    // Every warning came through the throttle (it names its source), and only once per source.
    expect([...bySource.keys()]).not.toContain(undefined);
    expect(Object.fromEntries(bySource)).toEqual(Object.fromEntries([...bySource.keys()].map((source) => [source, 1])));
    expect(bySource.get('processor events')).toBe(1);
    expect(bySource.get('outbox dispatch')).toBe(1);
    // The first failure's detail is kept (what the driver said), without a stack.
    const first = warnings.find((line) => line.source === 'processor events')!;
    expect(first.error).toEqual(expect.objectContaining({ message: expect.any(String) }));
    expect(during).not.toContain('"stack"');
    // Nor the statement knex puts before the driver's message (our SQL, with its bound values).
    expect(during).not.toContain('event_outbox');

    // Back: the loops work again, and say so once, with how many rounds failed.
    await worker.waitFor(/"source":"processor events".*"msg":"[^"]*working again/, 15_000);
    await worker.waitFor(/"source":"outbox dispatch".*"msg":"[^"]*working again/, 15_000);
    const recovered = logLines(worker.output()).find(
      (line) => line.source === 'processor events' && /working again/.test(line.msg),
    )!;
    expect(recovered.failures).toBeGreaterThan(10);
    expect(await worker.stop()).toBe(0);
  }, 60_000);
});
