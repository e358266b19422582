import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { PrivateRedis } from './support/redis-server.js';
import { numberedEvent, useWorld } from './support/world.js';

const world = useWorld();

// Stopping Redis must never hit the one that other test files and engineers share.
let redis: PrivateRedis;

beforeAll(async () => {
  redis = await PrivateRedis.start();
});

afterAll(() => redis.stop());

const OUTAGE_MS = 5_000;

describe('Redis going away', () => {
  it('leaves a few warnings without stacks, one per source at most, and delivery resumes once it is back', async () => {
    const { receiver, workspace } = world.current;
    const endpoint = await world.current.createEndpoint('/after-outage', {
      behaviour: { kind: 'status', status: 200 },
    });
    // It comes back empty: quick sweeps and schedule checks bring the lost jobs back soon.
    const worker = await world.current.startWorker({
      env: { REDIS_URL: redis.url },
      options: { sweepEveryMs: 500, sweepGraceMs: 500, scheduleCheckEveryMs: 1_000 },
    });
    const before = worker.logs().length;

    await redis.stop('SIGKILL');
    await new Promise((resolve) => setTimeout(resolve, OUTAGE_MS));
    const during = worker.logs().slice(before);
    await redis.restart();

    // Every BullMQ poll and every reconnect fails while Redis is away (dozens of lines a
    // second unthrottled): each source says so once per 10 s.
    const warnings = during.filter((line) => line.level === 'warn');
    expect(warnings.length).toBeGreaterThan(0);
    const bySource = new Map<string, number>();
    for (const line of warnings) bySource.set(line.source, (bySource.get(line.source) ?? 0) + 1);
    // Every warning came through a throttle (it names its source), and only once.
    expect(bySource.has(undefined as unknown as string)).toBe(false);
    expect(Math.max(...bySource.values())).toBe(1);
    expect(bySource.get('delivery worker')).toBe(1);
    // A refused connection is described, not traced.
    expect(worker.rawLogs()).not.toContain('"stack"');
    expect(warnings[0]!.error).toEqual(expect.objectContaining({ message: expect.any(String) }));

    // The worker finds Redis again by itself.
    const [event] = await world.current.record([numberedEvent(workspace)]);
    const [request] = await receiver.waitForRequests(endpoint.path, 1, 20_000);
    expect(request!.body.data).toEqual(event!.data);
  }, 60_000);
});
