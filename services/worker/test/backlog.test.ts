import { describe, expect, it, jest } from '@jest/globals';
import { eventually } from '@retention/testkit';
import { numberedEvent, useWorld } from './support/world.js';

const world = useWorld();

/** The scheduler's wiring on real Postgres and Redis (its rules are in delivery-scheduler.test.ts). */
describe('the delivery backlog', () => {
  it('keeps an endpoint’s backlog in Postgres: Redis holds about its cap, sent oldest first', async () => {
    const { db, receiver, workspace } = world.current;
    const endpoint = await world.current.createEndpoint('/backlog', {
      behaviour: { kind: 'status', status: 200, delayMs: 50 },
    });
    const events = await world.current.record(Array.from({ length: 200 }, () => numberedEvent(workspace)));
    const worker = await world.current.startWorker({ options: { maxInFlightPerEndpoint: 5 } });
    const queue = worker.handle.deliveryQueue;
    // Passes through: counts the jobs the scheduler gives Redis from here on.
    const addBulk = jest.spyOn(queue, 'addBulk');

    // Sampled all along: jobs in Redis (waiting, active, delayed), and what Postgres has queued.
    let peakJobs = 0;
    let peakQueued = 0;
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        const counts = await queue.getJobCounts('waiting', 'active', 'delayed', 'prioritized');
        const jobs = Object.values(counts).reduce((sum, count) => sum + count, 0);
        const [row] = await db('webhook_deliveries')
          .where({ endpoint_id: endpoint.id, status: 'pending' })
          .whereNotNull('queued_at')
          .count({ count: '*' });
        peakJobs = Math.max(peakJobs, jobs);
        peakQueued = Math.max(peakQueued, Number(row?.count));
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    })();
    try {
      await receiver.waitForRequests(endpoint.path, 200, 30_000);
    } finally {
      sampling = false;
      await sampler;
    }

    // Five requests at most; queued in Postgres and jobs in Redis, those five and the ones
    // whose request has ended and whose success is being recorded (the next is released
    // meanwhile), never the backlog.
    expect(receiver.peakInFlight(endpoint.path)).toBe(5);
    expect(peakQueued).toBeGreaterThanOrEqual(4);
    expect(peakQueued).toBeLessThanOrEqual(2 * 5);
    expect(peakJobs).toBeLessThanOrEqual(2 * 5);
    expect(await queue.getDelayedCount()).toBe(0);
    // A job whose request succeeded goes on with its endpoint's next delivery (claimed in the
    // statement that records the success), so far fewer jobs than deliveries pass through Redis.
    const jobsAdded = addBulk.mock.calls.reduce((sum, [jobs]) => sum + jobs.length, 0);
    expect(jobsAdded).toBeLessThan(50);
    // Released oldest first (the events' order, though a dispatch batch shares one due time):
    // each arrives no more than a cap's width out of the events' order.
    const order = new Map(
      events.map((event, index) => [(event.data as { reactivation_id: string }).reactivation_id, index]),
    );
    const arrivals = receiver.requestsTo(endpoint.path).map((request) => order.get(request.body.data.reactivation_id)!);
    expect(arrivals.every((eventIndex, arrival) => Math.abs(eventIndex - arrival) <= 5)).toBe(true);
    await eventually(async () => {
      const pending = await db('webhook_deliveries')
        .where({ endpoint_id: endpoint.id })
        .whereNot({ status: 'succeeded' });
      return pending.length === 0;
    });
    expect(receiver.problems()).toEqual([]);
  });

  it('leaves a retry in Postgres until it is due, then sends it at once', async () => {
    const { db, receiver, workspace } = world.current;
    let calls = 0;
    const endpoint = await world.current.createEndpoint('/retry-due', {
      behaviour: () => ({ kind: 'status', status: ++calls === 1 ? 500 : 200 }),
    });
    const worker = await world.current.startWorker({ env: { WEBHOOK_RETRY_DELAYS: '1500ms' } });
    await world.current.record([numberedEvent(workspace)]);
    await receiver.waitForRequests(endpoint.path, 1, 10_000);
    // Between the attempts: no job in Redis, the delivery pending in Postgres, not queued.
    await eventually(async () => {
      const row = await db('webhook_deliveries').where({ endpoint_id: endpoint.id }).first();
      return row.status === 'pending' && row.attempt_count === 1 && row.lease_expires_at === null;
    });
    const counts = await worker.handle.deliveryQueue.getJobCounts('waiting', 'active', 'delayed');
    expect(counts).toEqual({ waiting: 0, active: 0, delayed: 0 });
    const row = await db('webhook_deliveries').where({ endpoint_id: endpoint.id }).first();
    expect(row.queued_at).toBeNull();

    const [, second] = await receiver.waitForRequests(endpoint.path, 2, 10_000);
    const [failed] = await db('webhook_attempts').where({ endpoint_id: endpoint.id, attempt: 1 });
    // Sent when due (1.5 s after the failure, up to 10% later), not a poll (1 s) later.
    const late = second!.receivedAt - failed.next_attempt_at.getTime();
    expect(late).toBeGreaterThanOrEqual(-5);
    expect(late).toBeLessThan(400);
  });
});
