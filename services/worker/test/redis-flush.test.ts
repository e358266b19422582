import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Redis } from 'ioredis';
import { eventually } from '@retention/testkit';
import { PrivateRedis } from './support/redis-server.js';
import { numberedEvent, useWorld } from './support/world.js';

const world = useWorld();

// FLUSHALL must never reach the Redis that other test files and engineers share.
let server: PrivateRedis;
let redisUrl = '';

beforeAll(async () => {
  server = await PrivateRedis.start();
  redisUrl = server.url;
});

afterAll(() => server.stop());

describe('Redis losing its data', () => {
  it('after a FLUSHALL during a burst of 1,000 events, every event still reaches the receiver', async () => {
    const { receiver, workspace, db } = world.current;
    const endpoint = await world.current.createEndpoint('/flushed', {
      behaviour: { kind: 'status', status: 200, delayMs: 20 },
    });
    // Far fewer slots than the endpoint's cap: of the 10 deliveries released to Redis for it,
    // at most 6 are leased when it is flushed (2 in flight, each with one or two spares claimed
    // ahead: docs/delivery-scheduler.md, "Spares"), and only the sweeper can give the others a job
    // again (an attempt in flight still ends, records, and releases the next). With 5 slots,
    // 5 attempts and their 5 spares could lease all 10, and no job was then lost to the flush.
    const worker = await world.current.startWorker({
      env: { REDIS_URL: redisUrl },
      options: { concurrency: 2, sweepEveryMs: 500, sweepGraceMs: 500, scheduleCheckEveryMs: 1_000 },
    });
    const admin = new Redis(redisUrl);

    const ids: string[] = [];
    let flushedAfter = -1;
    for (let batch = 0; batch < 10; batch += 1) {
      const events = await world.current.record(Array.from({ length: 100 }, () => numberedEvent(workspace)));
      ids.push(...events.map((event) => (event.data as { reactivation_id: string }).reactivation_id));
      if (flushedAfter < 0 && receiver.requestsTo(endpoint.path).length >= 300) {
        await admin.flushall();
        flushedAfter = receiver.requestsTo(endpoint.path).length;
      }
    }
    if (flushedAfter < 0) {
      await receiver.waitForRequests(endpoint.path, 300, 30_000);
      await admin.flushall();
      flushedAfter = receiver.requestsTo(endpoint.path).length;
    }
    expect(flushedAfter).toBeLessThan(1_000);

    const delivered = () =>
      new Set(receiver.requestsTo(endpoint.path).map((request) => request.body.data.reactivation_id));
    await eventually(() => ids.every((id) => delivered().has(id)), 90_000, 100);
    await admin.quit();

    const duplicates = receiver.requestsTo(endpoint.path).length - delivered().size;
    process.stdout.write(
      `FLUSHALL during a burst: ${ids.length} events, flushed after ${flushedAfter} requests, ` +
        `all ${delivered().size} delivered, ${duplicates} duplicate(s)\n`,
    );
    expect(delivered().size).toBe(ids.length);
    expect(receiver.problems()).toEqual([]);
    const messages = worker.logs().map((line) => line.msg as string);
    expect(messages).toContain('sweeper re-enqueued deliveries that had no job');
    expect(messages).toContain('job scheduler missing (Redis lost its data?): restoring it');
    await eventually(async () => {
      const unfinished = await db('webhook_deliveries')
        .where({ endpoint_id: endpoint.id })
        .whereNot({ status: 'succeeded' });
      return unfinished.length === 0;
    });
  }, 180_000);
});
