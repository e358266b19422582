import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it } from '@jest/globals';
import { Queue } from 'bullmq';
import { createLogger, createRedis, type Redis } from '@retention/runtime';
import { eventually, redisKeyPrefix, runId, TEST_REDIS_URL } from '@retention/testkit';
import { startPeriodicJobs, type PeriodicJobs } from '../src/periodic-jobs.js';
import { QUEUE_NAMES } from '../src/queues.js';

const logger = createLogger('periodic-test', 'silent');
const running: PeriodicJobs[] = [];
const connections: Redis[] = [];

function replica(prefix: string, run: () => Promise<unknown>, checkEveryMs = 60_000): Promise<PeriodicJobs> {
  const producer = createRedis(TEST_REDIS_URL, 'command', 'periodic-producer');
  const consumer = createRedis(TEST_REDIS_URL, 'blocking', 'periodic-consumer');
  connections.push(producer, consumer);
  return startPeriodicJobs({
    jobs: [{ name: 'tick', everyMs: 250, run }],
    producer,
    consumer,
    prefix,
    logger,
    checkEveryMs,
  }).then((jobs) => {
    running.push(jobs);
    return jobs;
  });
}

afterEach(async () => {
  await Promise.all(running.splice(0).map((jobs) => jobs.close()));
  await Promise.all(connections.splice(0).map((redis) => redis.quit()));
});

const newPrefix = () => `${redisKeyPrefix(runId())}-${randomBytes(4).toString('hex')}`;

describe('periodic jobs', () => {
  it('run once per period across replicas, not once per replica', async () => {
    const prefix = newPrefix();
    const runs: number[] = [];
    const tick = () => {
      runs.push(Date.now());
      return Promise.resolve();
    };
    await Promise.all([replica(prefix, tick), replica(prefix, tick), replica(prefix, tick)]);
    // Count runs against the periods that actually elapsed, not against a fixed sleep: on a
    // loaded machine fewer periods fire in a given wall time, but never more than one each.
    await eventually(() => runs.length >= 8, 20_000);
    const first = runs[0] ?? 0;
    const last = runs[runs.length - 1] ?? 0;
    const periodsSpanned = Math.floor((last - first) / 250) + 1;
    // Three replicas each running their own schedule would make about three runs a period.
    expect(runs.length).toBeLessThanOrEqual(periodsSpanned + 2);
  });

  it('restore a scheduler that Redis lost', async () => {
    const prefix = newPrefix();
    let runs = 0;
    await replica(
      prefix,
      () => {
        runs += 1;
        return Promise.resolve();
      },
      200,
    );
    await eventually(() => runs >= 2);
    const connection = createRedis(TEST_REDIS_URL, 'command', 'periodic-admin');
    connections.push(connection);
    const queue = new Queue(QUEUE_NAMES.periodic, { connection, prefix });
    await queue.removeJobScheduler('tick');
    await queue.obliterate({ force: true });
    await eventually(async () => (await queue.getJobScheduler('tick')) !== undefined);
    const before = runs;
    await eventually(() => runs >= before + 2);
    await queue.close();
  });
});
