import { randomBytes } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import {
  eventually,
  redisKeyPrefix,
  runId,
  startService,
  TEST_REDIS_URL,
  type ServiceProcess,
} from '@retention/testkit';
import { numberedEvent, TEST_ENV, useWorld } from './support/world.js';

const world = useWorld();

/** The worker as a real process, trusting the receiver's certificate through NODE_EXTRA_CA_CERTS. */
function startWorkerProcess(prefix: string, env: Record<string, string> = {}): ServiceProcess {
  return startService('services/worker/src/main.ts', {
    DATABASE_URL: world.current.databaseUrl,
    REDIS_URL: TEST_REDIS_URL,
    REDIS_KEY_PREFIX: prefix,
    WORKER_PORT: '0', // any free port: several workers run side by side here
    NODE_EXTRA_CA_CERTS: world.current.certificate.certPath,
    ...TEST_ENV,
    ...env,
  });
}

/** How many times each event reached the receiver, by reactivation_id. */
function arrivalsOf(path: string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const request of world.current.receiver.requestsTo(path)) {
    const id = request.body.data.reactivation_id as string;
    counts.set(id, (counts.get(id) ?? 0) + 1);
  }
  return counts;
}

describe('worker process faults', () => {
  it('on SIGTERM finishes the attempts in flight, records them, and exits 0', async () => {
    const { db, workspace } = world.current;
    const endpoint = await world.current.createEndpoint('/slow', {
      behaviour: { kind: 'status', status: 200, delayMs: 1_500 },
    });
    const worker = startWorkerProcess(`${redisKeyPrefix(runId())}-${randomBytes(4).toString('hex')}`, {
      WEBHOOK_TIMEOUT_MS: '5000',
    });
    await worker.waitFor(/worker started/);
    const events = await world.current.record(Array.from({ length: 5 }, () => numberedEvent(workspace)));
    await world.current.receiver.waitForRequests(endpoint.path, 5);

    expect(await worker.stop('SIGTERM')).toBe(0);
    // Each attempt finished during the shutdown is logged as well as recorded.
    expect(worker.output().match(/"msg":"delivery attempt succeeded"/g)).toHaveLength(5);
    const attempts = await db('webhook_attempts').where({ endpoint_id: endpoint.id });
    expect(attempts.map((attempt) => attempt.outcome)).toEqual(Array(5).fill('succeeded'));
    const deliveries = await db('webhook_deliveries').whereIn(
      'event_id',
      events.map((event) => event.id),
    );
    expect(deliveries.map((delivery) => delivery.status)).toEqual(Array(5).fill('succeeded'));
  }, 60_000);

  it('after kill -9 during a burst of 1,000 events, a new worker delivers every event at least once', async () => {
    const { db, workspace, receiver } = world.current;
    const endpoint = await world.current.createEndpoint('/kill-9', {
      behaviour: { kind: 'status', status: 200, delayMs: 30 },
    });
    const prefix = `${redisKeyPrefix(runId())}-${randomBytes(4).toString('hex')}`;
    // The receiver answers in 30 ms, but it shares this process with the test, on a machine
    // other suites keep busy: a one-second timeout, ten requests in flight, and one stall of
    // this process would be ten failures in a row, which disable the endpoint (spec part 3).
    const env = { WEBHOOK_TIMEOUT_MS: '3000' };
    const first = startWorkerProcess(prefix, env);
    await first.waitFor(/worker started/);

    const ids: string[] = [];
    let killed = false;
    for (let batch = 0; batch < 10; batch += 1) {
      const events = await world.current.record(Array.from({ length: 100 }, () => numberedEvent(workspace)));
      ids.push(...events.map((event) => (event.data as { reactivation_id: string }).reactivation_id));
      if (!killed && receiver.requestsTo(endpoint.path).length >= 300) {
        first.child.kill('SIGKILL');
        killed = true;
      }
    }
    if (!killed) {
      await receiver.waitForRequests(endpoint.path, 300, 30_000);
      first.child.kill('SIGKILL');
    }
    await first.exited;
    const receivedBeforeRestart = receiver.requestsTo(endpoint.path).length;
    expect(receivedBeforeRestart).toBeLessThan(1_000);

    const unfinishedDeliveries = () =>
      db('webhook_deliveries').where({ endpoint_id: endpoint.id }).whereNot({ status: 'succeeded' });
    const second = startWorkerProcess(prefix, env);
    try {
      await second.waitFor(/worker started/);
      // Every event at the receiver is not enough: attempts the killed worker sent but never
      // recorded are still leased, and only once the lease runs out are they sent again,
      // logged as interrupted, and recorded.
      await eventually(
        async () => ids.every((id) => arrivalsOf(endpoint.path).has(id)) && (await unfinishedDeliveries()).length === 0,
        90_000,
        100,
      ).catch(async (error: Error) => {
        // Say what is stuck, most telling first (CI keeps only the start of a long message):
        // the endpoint's state, the failed attempts' errors, then the deliveries left.
        const state = await db('webhook_endpoints')
          .where({ id: endpoint.id })
          .first('enabled', 'failure_count', 'disabled_reason');
        const failures = await db('webhook_attempts')
          .where({ endpoint_id: endpoint.id })
          .whereNot({ outcome: 'succeeded' })
          .select('outcome', 'error')
          .count({ count: '*' })
          .groupBy('outcome', 'error');
        const stuck = (await unfinishedDeliveries()).map((delivery) => ({
          status: delivery.status,
          attempts: delivery.attempt_count,
          queued_at: delivery.queued_at,
          lease_expires_at: delivery.lease_expires_at,
          next_attempt_at: delivery.next_attempt_at,
        }));
        const missing = ids.filter((id) => !arrivalsOf(endpoint.path).has(id)).length;
        throw new Error(
          `${error.message}: endpoint ${JSON.stringify(state)}; attempts not succeeded ${JSON.stringify(failures)}; ` +
            `${missing} event(s) never arrived; ${stuck.length} unfinished: ${JSON.stringify(stuck.slice(0, 10))}`,
        );
      });
    } finally {
      await second.stop('SIGTERM');
    }

    const counts = arrivalsOf(endpoint.path);
    const duplicates = [...counts.values()].reduce((sum, count) => sum + count - 1, 0);
    const interrupted = await db('webhook_attempts').where({ endpoint_id: endpoint.id, outcome: 'interrupted' });
    process.stdout.write(
      `kill -9 during a burst: ${ids.length} events, ${receivedBeforeRestart} requests before the restart, ` +
        `all ${counts.size} delivered, ${duplicates} duplicate(s), ${interrupted.length} attempt(s) logged as interrupted\n`,
    );
    expect(counts.size).toBe(ids.length);
    // A duplicate can only come from an attempt the killed worker had in flight.
    expect(duplicates).toBeLessThanOrEqual(interrupted.length);
    expect(receiver.problems()).toEqual([]);
    expect(await unfinishedDeliveries()).toEqual([]);
  }, 180_000);
});
