import { describe, expect, it, jest } from '@jest/globals';
import { eventually } from '@retention/testkit';
import type { WorkerOptions } from '../src/worker.js';
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
    // A timeout well above the receiver's 50 ms: on a busy machine a request timed out would be
    // retried later, out of order, and this test is about the order of releases.
    const worker = await world.current.startWorker({
      options: { maxInFlightPerEndpoint: 5 },
      env: { WEBHOOK_TIMEOUT_MS: '3000' },
    });
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

    // Five requests at most; queued in Postgres, those five and the ones not in flight (a
    // success being recorded while the next is released, a job's two spares: five in flight
    // is few), never the backlog; jobs in Redis, a request and a release's worth each.
    expect(receiver.peakInFlight(endpoint.path)).toBe(5);
    expect(peakQueued).toBeGreaterThanOrEqual(4);
    expect(peakQueued).toBeLessThanOrEqual(3 * 5);
    expect(peakJobs).toBeLessThanOrEqual(2 * 5);
    expect(await queue.getDelayedCount()).toBe(0);
    // A job whose request succeeded goes on with its endpoint's next delivery (claimed in the
    // statement that records the success), so far fewer jobs than deliveries pass through Redis.
    const jobsAdded = addBulk.mock.calls.reduce((sum, [jobs]) => sum + jobs.length, 0);
    expect(jobsAdded).toBeLessThan(50);
    // Released oldest first (the events' order, though a dispatch batch shares one due time):
    // what is claimed and not yet sent is at most a request and two spares per job, so each
    // arrives no more than three times the cap out of the events' order.
    const order = new Map(
      events.map((event, index) => [(event.data as { reactivation_id: string }).reactivation_id, index]),
    );
    const arrivals = receiver.requestsTo(endpoint.path).map((request) => order.get(request.body.data.reactivation_id)!);
    const furthestOutOfOrder = Math.max(...arrivals.map((eventIndex, arrival) => Math.abs(eventIndex - arrival)));
    expect(furthestOutOfOrder).toBeLessThanOrEqual(3 * 5);
    await eventually(async () => {
      const pending = await db('webhook_deliveries')
        .where({ endpoint_id: endpoint.id })
        .whereNot({ status: 'succeeded' });
      return pending.length === 0;
    });
    expect(receiver.problems()).toEqual([]);
  });

  /**
   * Every statement that records an attempt or claims one inserts into webhook_attempts, so all
   * of them wait behind a lock on it. Those running when it is asked for end first, and what
   * they claimed is sent within milliseconds; after that, only deliveries claimed ahead can
   * still go out, as the requests in flight (200 ms each) end. Says how many went out while the
   * lock was held, then checks every delivery was sent once. The lock is held two seconds, and
   * longer (up to ten) until `atLeast` have gone out: on a CI machine whose cores are all busy
   * (load 10 on two), the worker and this test's receiver (its 200 ms is a timer here) ran late
   * enough that no spare arrived within two seconds. What a job sends while its statements wait
   * is bounded by its spares, however long the lock is held, so the upper bounds hold either way.
   */
  async function sentWhileStatementsWait(setup: {
    path: string;
    cap: number;
    atLeast: number;
    options?: WorkerOptions;
  }) {
    const { db, receiver, workspace } = world.current;
    const endpoint = await world.current.createEndpoint(setup.path, {
      behaviour: { kind: 'status', status: 200, delayMs: 200 },
    });
    await world.current.record(Array.from({ length: 100 }, () => numberedEvent(workspace)));
    // A timeout well above the receiver's 200 ms: on a busy machine a request timed out would be
    // retried, and this test counts attempts.
    await world.current.startWorker({
      options: { maxInFlightPerEndpoint: setup.cap, ...setup.options },
      env: { WEBHOOK_TIMEOUT_MS: '3000' },
    });
    await receiver.waitForRequests(endpoint.path, 30, 30_000);

    const lock = await db.transaction();
    let sentLater: number;
    try {
      await lock.raw('LOCK TABLE webhook_attempts IN SHARE MODE');
      const lockedAt = Date.now();
      const sentSinceLock = () =>
        receiver.requestsTo(endpoint.path).filter((request) => request.receivedAt >= lockedAt + 50).length;
      await new Promise((resolve) => setTimeout(resolve, 2_000));
      await eventually(() => sentSinceLock() >= setup.atLeast, 8_000).catch(() => undefined);
      sentLater = sentSinceLock();
    } finally {
      await lock.rollback();
    }

    await receiver.waitForRequests(endpoint.path, 100, 30_000);
    expect(receiver.peakInFlight(endpoint.path)).toBeLessThanOrEqual(setup.cap);
    await eventually(async () => {
      const [row] = await db('webhook_deliveries')
        .where({ endpoint_id: endpoint.id, status: 'succeeded' })
        .count({ count: '*' });
      return Number(row?.count) === 100;
    });
    // Once each, as attempt 1: no spare was sent twice, or logged as interrupted.
    const attempts = await db('webhook_attempts').where({ endpoint_id: endpoint.id }).select('attempt', 'outcome');
    expect(attempts).toHaveLength(100);
    expect(attempts.every((row) => row.attempt === 1 && row.outcome === 'succeeded')).toBe(true);
    expect(receiver.requestsTo(endpoint.path)).toHaveLength(100);
    expect(receiver.problems()).toEqual([]);
    return sentLater;
  }

  it('sends a quick endpoint’s next deliveries while the successes before them are recorded: two spares ahead while few attempts run', async () => {
    const cap = 5;
    // Requests of 200 ms count as quick here (100 ms by default), so that a second holds several.
    const sentLater = await sentWhileStatementsWait({
      path: '/two-spares',
      cap,
      atLeast: cap + 1,
      options: { twoSparesUnderMs: 1_000 },
    });
    // Each job's two spares (then they wait for the statement too); with one spare a job
    // sends at most one, without spares none. At most three a job: a job's first success
    // claims its next and two spares in one statement, which may be one running at the lock.
    expect(sentLater).toBeGreaterThan(cap);
    expect(sentLater).toBeLessThanOrEqual(3 * cap);
  }, 60_000);

  it('keeps one spare ahead while more attempts run than twoSparesUpTo', async () => {
    const cap = 5;
    const sentLater = await sentWhileStatementsWait({
      path: '/one-spare-busy',
      cap,
      atLeast: 1,
      options: { twoSparesUnderMs: 1_000, twoSparesUpTo: cap - 1 },
    });
    // One spare a job, sent as the request in flight at the lock ends (the first within 50 ms
    // of the lock is not counted): a job going on and on would send ten each in two seconds.
    expect(sentLater).toBeGreaterThanOrEqual(1);
    expect(sentLater).toBeLessThanOrEqual(cap);
  }, 60_000);

  it('keeps one spare ahead for an endpoint whose requests take 100 ms or more', async () => {
    const cap = 5;
    // Few attempts run, but each takes 200 ms: a statement ends well within one request.
    const sentLater = await sentWhileStatementsWait({ path: '/one-spare-slower', cap, atLeast: 1 });
    expect(sentLater).toBeGreaterThanOrEqual(1);
    expect(sentLater).toBeLessThanOrEqual(cap);
  }, 60_000);

  it('gives a spare back to the backlog when the request before it fails, unsent and unnumbered', async () => {
    const { db, receiver, workspace } = world.current;
    let calls = 0;
    const endpoint = await world.current.createEndpoint('/spare-back', {
      behaviour: () => ({ kind: 'status', status: ++calls === 40 ? 500 : 200, delayMs: 5 }),
    });
    await world.current.record(Array.from({ length: 120 }, () => numberedEvent(workspace)));
    // Only the 40th request fails: a timeout well above the receiver's 5 ms, so that a busy
    // machine does not fail others.
    await world.current.startWorker({ env: { WEBHOOK_RETRY_DELAYS: '200ms', WEBHOOK_TIMEOUT_MS: '3000' } });
    await receiver.waitForRequests(endpoint.path, 121, 30_000);
    await eventually(async () => {
      const [row] = await db('webhook_deliveries')
        .where({ endpoint_id: endpoint.id, status: 'succeeded' })
        .count({ count: '*' });
      return Number(row?.count) === 120;
    });
    const attempts = await db('webhook_attempts')
      .where({ endpoint_id: endpoint.id })
      .orderBy(['delivery_id', 'attempt'])
      .select('delivery_id', 'attempt', 'outcome');
    // The failed one, then its retry; every other delivery once, as attempt 1 (a spare given
    // back keeps its number: the attempt it was claimed for was never made).
    expect(attempts.filter((row) => row.outcome === 'failed')).toHaveLength(1);
    const failed = attempts.find((row) => row.outcome === 'failed')!;
    expect(attempts.filter((row) => row.delivery_id === failed.delivery_id).map((row) => row.attempt)).toEqual([1, 2]);
    const others = attempts.filter((row) => row.delivery_id !== failed.delivery_id);
    expect(others).toHaveLength(119);
    expect(others.every((row) => row.attempt === 1 && row.outcome === 'succeeded')).toBe(true);
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
