import { randomUUID } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import { eventually } from '@retention/testkit';
import { numberedEvent, useWorld, type SampleEvent, type Workspace } from './support/world.js';

const world = useWorld();

/**
 * Long enough that the hanging endpoint is not auto-disabled (10 failures) before the end, and
 * that a healthy delivery waiting behind a hanging attempt (the whole timeout) stands far from
 * one a loaded CI machine merely slowed: one CI run saw 2.6 s, against 3 s before.
 */
const TIMEOUT_MS = 6000;
/**
 * The bounds on a healthy delivery's latency beside hanging endpoints. Waiting for a slot that
 * a hanging attempt holds costs up to the whole timeout: with the slots all taken, the waits
 * spread from nothing to 6 s, a p90 near 5.4 s. A loaded CI machine's worst seen without that
 * fault is a p90 of 757 ms and a maximum of 1,008 ms. Each bound sits near the geometric middle
 * of the two, so neither noise nor the fault comes near it. How close to alone the healthy
 * endpoint stays is bench:webhooks' measure (its p99 beside ten hanging backlogs), not a test's:
 * a bound relative to a measurement taken earlier in the same test failed when the suites
 * beside it loaded the machine differently (a p90 of 757 ms against 119 ms alone).
 */
const P90_BOUND_MS = TIMEOUT_MS / 3;
const MAX_BOUND_MS = TIMEOUT_MS / 2;
const WORKER = {
  env: { WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS), WEBHOOK_RETRY_DELAYS: '10m' },
  // Without a per-endpoint cap, the hanging endpoint would hold all 20 slots for the whole timeout at a time.
  options: { concurrency: 20, maxInFlightPerEndpoint: 5 },
};
/** Slow endpoints' attempts, all together: half the worker's slots (the default). */
const SLOW_SHARE = 10;

function reminder(workspace: Workspace): SampleEvent {
  return {
    type: 'trial.reminder_sent',
    data: {
      reminder_id: randomUUID(),
      customer_email: workspace.customerEmail,
      subscription_id: workspace.subscriptionId,
      trial_end: '2026-05-01T00:00:00.000Z',
    },
  };
}

/** Sends `count` events to the healthy endpoint at a steady pace; returns commit-to-arrival latencies. */
async function healthyLatencies(path: string, count: number): Promise<number[]> {
  const { receiver, workspace } = world.current;
  const committedAt = new Map<string, number>();
  for (let sent = 0; sent < count; sent += 1) {
    const [event] = await world.current.record([reminder(workspace)]);
    committedAt.set((event!.data as { reminder_id: string }).reminder_id, Date.now());
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  const arrived = () => receiver.requestsTo(path).filter((request) => committedAt.has(request.body.data.reminder_id));
  await eventually(() => arrived().length === count, 15_000);
  return arrived()
    .map((request) => request.receivedAt - committedAt.get(request.body.data.reminder_id)!)
    .sort((a, b) => a - b);
}

const quantile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))]!;

describe('per-endpoint isolation', () => {
  it('a hanging endpoint with 2,000 deliveries queued does not delay another endpoint', async () => {
    const { receiver, workspace, db } = world.current;
    const healthy = await world.current.createEndpoint(
      '/healthy',
      { behaviour: { kind: 'status', status: 200 } },
      { events: ['trial.reminder_sent'] },
    );
    const first = await world.current.startWorker(WORKER);
    await healthyLatencies(healthy.path, 10); // warm-up: the endpoint is known as fast
    await first.handle.close();

    // The backlog is in the outbox before the next worker starts.
    const hanging = await world.current.createEndpoint(
      '/hanging',
      { behaviour: { kind: 'hang' } },
      { events: ['reactivation.sent'] },
    );
    await world.current.record(Array.from({ length: 2000 }, () => numberedEvent(workspace)));
    const worker = await world.current.startWorker(WORKER);
    await eventually(async () => {
      const [row] = await db('webhook_deliveries').where({ endpoint_id: hanging.id }).count({ count: '*' });
      return Number(row?.count) === 2000;
    }, 20_000);
    // Sorted out: 5 attempts hang at the receiver (its probe failed at the timeout, and it is
    // slow now), the other 1,995 wait in Postgres; Redis holds the 5 hanging jobs and no more.
    await eventually(() => receiver.peakInFlight(hanging.path) === 5, 20_000);
    await eventually(async () => (await worker.handle.deliveryQueue.getWaitingCount()) === 0, 20_000);
    const inRedis = await worker.handle.deliveryQueue.getJobCounts('waiting', 'active', 'delayed');
    expect(inRedis).toEqual({ waiting: 0, active: 5, delayed: 0 });

    const beside = await healthyLatencies(healthy.path, 30);
    // Every healthy delivery arrives well within the hanging endpoint's timeout, and the hanging
    // endpoint never has more than its share of attempts open.
    expect(quantile(beside, 1)).toBeLessThan(MAX_BOUND_MS);
    expect(quantile(beside, 0.9)).toBeLessThan(P90_BOUND_MS);
    expect(receiver.peakInFlight(hanging.path)).toBe(5);
    expect((await db('webhook_endpoints').where({ id: hanging.id }).first()).enabled).toBe(true);
    expect(receiver.problems()).toEqual([]);
  });

  it('several hanging endpoints with backlogs share half the slots, and a healthy one is not delayed', async () => {
    const { receiver, workspace, db } = world.current;
    const healthy = await world.current.createEndpoint(
      '/healthy-beside-many',
      { behaviour: { kind: 'status', status: 200 } },
      { events: ['trial.reminder_sent'] },
    );
    const first = await world.current.startWorker(WORKER);
    await healthyLatencies(healthy.path, 10); // warm-up: the endpoint is known as fast
    await first.handle.close();

    // Eight hanging endpoints at 5 attempts each would take all 20 slots: new to the next
    // worker, each gets one attempt (a probe) until it has shown itself slow, and then they
    // share 10 slots between them.
    const hanging = await Promise.all(
      Array.from({ length: 8 }, (_, index) =>
        world.current.createEndpoint(
          `/hanging-${index}`,
          { behaviour: { kind: 'hang' } },
          { events: ['reactivation.sent'] },
        ),
      ),
    );
    await world.current.record(Array.from({ length: 100 }, () => numberedEvent(workspace)));
    const workerStarting = Date.now();
    const worker = await world.current.startWorker(WORKER);
    // The most attempts the hanging endpoints had open at once while `during` runs, and in the
    // worker's first 900 ms: before any probe can have been in flight for the second that
    // makes its endpoint known as slow (EndpointGate).
    const peakInFlightOfHanging = async (during: () => Promise<number[]>) => {
      let peak = 0;
      let beforeAnyIsSlow = 0;
      const sample = () => {
        const open = hanging.reduce((sum, endpoint) => sum + receiver.inFlight(endpoint.path), 0);
        peak = Math.max(peak, open);
        if (Date.now() - workerStarting < 900) beforeAnyIsSlow = Math.max(beforeAnyIsSlow, open);
      };
      const sampler = setInterval(sample, 10);
      try {
        return { latencies: await during(), peak, beforeAnyIsSlow };
      } finally {
        clearInterval(sampler);
      }
    };

    // First contact: each hanging endpoint's probe hangs, and its other 99 deliveries wait in
    // Postgres. Waiting for a hanging attempt would cost the healthy endpoint at least the
    // timeout, and that must never happen.
    const meeting = await peakInFlightOfHanging(() => healthyLatencies(healthy.path, 40));
    expect(quantile(meeting.latencies, 1)).toBeLessThan(TIMEOUT_MS);
    // One probe each while none is known to be slow. Once a probe has hung for a second, its
    // endpoint is slow and may take more of the slow share: on a busy machine the 40 events
    // outlast that second (a peak of 10 in one CI run), so only the share bounds the whole.
    expect(meeting.beforeAnyIsSlow).toBeLessThanOrEqual(hanging.length);
    expect(meeting.peak).toBeLessThanOrEqual(SLOW_SHARE);

    // Then, once they are known to be slow and hold only their share: no healthy delivery waits.
    await eventually(async () => {
      const row = await db('webhook_attempts')
        .whereIn(
          'endpoint_id',
          hanging.map((endpoint) => endpoint.id),
        )
        .countDistinct({ count: 'endpoint_id' })
        .first();
      return Number(row?.count) === hanging.length;
    }, 20_000);
    await eventually(async () => (await worker.handle.deliveryQueue.getWaitingCount()) === 0, 20_000);
    const steady = await peakInFlightOfHanging(() => healthyLatencies(healthy.path, 30));
    // No delivery waits for a slot a hanging attempt holds (the bounds' comment says why these).
    expect(quantile(steady.latencies, 1)).toBeLessThan(MAX_BOUND_MS);
    expect(quantile(steady.latencies, 0.9)).toBeLessThan(P90_BOUND_MS);
    // They use their share in full, and never more.
    expect(steady.peak).toBe(SLOW_SHARE);
    for (const endpoint of hanging) {
      expect((await db('webhook_endpoints').where({ id: endpoint.id }).first()).enabled).toBe(true);
    }
    expect(receiver.problems()).toEqual([]);
  }, 60_000);
});
