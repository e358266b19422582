import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { Queue } from 'bullmq';
import { createLogger, createRedis, type Redis } from '@retention/runtime';
import { redisKeyPrefix, runId, TEST_REDIS_URL } from '@retention/testkit';
import { EndpointGate, SLOW_ATTEMPT_MS } from '../src/delivery/endpoint-gate.js';
import { DELIVERY_JOB_NAME, QUEUE_NAMES, type DeliveryJobData } from '../src/queues.js';

/**
 * The gate's bounds, slot by slot. Its only I/O is promoting parked jobs: a real queue on a
 * Redis prefix of this file's own, with real delayed jobs where a test watches promotions.
 */

const CAP = 10;
const SLOW_SHARE = 20;

let redis: Redis;
let queue: Queue<DeliveryJobData>;

beforeAll(() => {
  redis = createRedis(TEST_REDIS_URL, 'command', 'gate-test');
  queue = new Queue(QUEUE_NAMES.deliveries, {
    connection: redis,
    prefix: `${redisKeyPrefix(runId())}-${randomBytes(4).toString('hex')}`,
  });
});

afterAll(async () => {
  await queue.obliterate({ force: true });
  await queue.close();
  await redis.quit();
});

function newGate(): EndpointGate {
  return new EndpointGate({
    queue,
    logger: createLogger('gate-test', 'silent'),
    maxInFlight: CAP,
    maxSlowInFlight: SLOW_SHARE,
    slotMs: 10_000,
  });
}

/** Lets the gate learn how long the endpoint's attempts take. */
async function teach(gate: EndpointGate, endpointId: string, attemptMs: number): Promise<void> {
  const deliveryId = randomUUID();
  expect(await gate.acquire(endpointId, deliveryId)).toBe(0);
  await gate.release(endpointId, deliveryId, attemptMs);
}

/** A quick endpoint in use: one attempt answered quickly, and the next one, waiting, holds a slot. */
async function busyQuickEndpoint(gate: EndpointGate): Promise<string> {
  const endpointId = randomUUID();
  await teach(gate, endpointId, 20);
  expect(await gate.acquire(endpointId, randomUUID())).toBe(0);
  return endpointId;
}

/** As the worker does: a slot (0), or else the job parks (its place in line). */
async function acquire(gate: EndpointGate, endpointId: string, deliveryId: string): Promise<number> {
  const place = await gate.acquire(endpointId, deliveryId);
  if (place > 0) await gate.parked(endpointId, deliveryId);
  return place;
}

/** A job parked for real, as a delayed job that a promotion moves to waiting. */
async function delayedJob(endpointId: string): Promise<string> {
  const deliveryId = randomUUID();
  await queue.add(DELIVERY_JOB_NAME, { deliveryId, endpointId }, { jobId: deliveryId, delay: 60_000 });
  return deliveryId;
}

/** Tries `count` acquires at once (none waits: the endpoint is slow or idle); returns the granted ids. */
async function acquireMany(gate: EndpointGate, endpointId: string, count: number): Promise<string[]> {
  const ids = Array.from({ length: count }, () => randomUUID());
  const places = await Promise.all(ids.map((id) => acquire(gate, endpointId, id)));
  return ids.filter((_id, index) => places[index] === 0);
}

describe('the endpoint gate', () => {
  it('lets slow endpoints hold the slow share between them, never more, while a quick one keeps its cap', async () => {
    const gate = newGate();
    const hanging = Array.from({ length: 10 }, () => randomUUID());
    for (const endpointId of hanging) await teach(gate, endpointId, 8_000);
    const quick = await busyQuickEndpoint(gate);

    // Ten hanging endpoints want 10 slots each: 20 between them, whatever their backlogs.
    const granted = await Promise.all(hanging.map((endpointId) => acquireMany(gate, endpointId, CAP)));
    expect(granted.flat()).toHaveLength(SLOW_SHARE);
    expect(Math.max(...granted.map((ids) => ids.length))).toBeLessThanOrEqual(CAP);
    // The quick endpoint is not affected: the rest of its cap, at once.
    expect(await acquireMany(gate, quick, CAP - 1)).toHaveLength(CAP - 1);

    // A slow slot that frees is taken again by a slow endpoint; the share is never exceeded.
    const [first] = granted.find((ids) => ids.length > 0)!;
    const owner = hanging[granted.findIndex((ids) => ids.includes(first!))]!;
    await gate.release(owner, first!, 8_000);
    const again = await Promise.all(hanging.map((endpointId) => acquireMany(gate, endpointId, 1)));
    expect(again.flat()).toHaveLength(1);
  });

  it('gives an endpoint it has not seen answer one attempt, then its cap once that was quick', async () => {
    const gate = newGate();
    const fresh = randomUUID();
    const probe = randomUUID();
    expect(await gate.acquire(fresh, probe)).toBe(0);
    // While the probe is out, the others park at once, holding no slot.
    const parked: string[] = [];
    for (let index = 0; index < CAP + 2; index += 1) parked.push(await delayedJob(fresh));
    const started = Date.now();
    const places = await Promise.all(parked.map((id) => acquire(gate, fresh, id)));
    expect(places).toEqual(parked.map((_id, index) => index + 1));
    expect(Date.now() - started).toBeLessThan(500);

    // A quick answer: parked jobs are promoted to fill the cap at once, oldest first.
    await gate.release(fresh, probe, 15);
    const states = await Promise.all(parked.map((id) => queue.getJobState(id)));
    expect(states).toEqual([...Array<string>(CAP).fill('waiting'), 'delayed', 'delayed']);
  });

  it('treats an endpoint as slow once one attempt has been in flight for more than a second', async () => {
    const gate = newGate();
    // Its attempt in flight is the one that will hang.
    const turning = await busyQuickEndpoint(gate);
    // Fill the slow share with other endpoints' attempts.
    for (let index = 0; index < SLOW_SHARE / CAP; index += 1) {
      const slow = randomUUID();
      await teach(gate, slow, 8_000);
      expect(await acquireMany(gate, slow, CAP)).toHaveLength(CAP);
    }
    // Quick so far: another attempt gets a slot at once.
    expect(await gate.acquire(turning, randomUUID())).toBe(0);
    await new Promise((resolve) => setTimeout(resolve, SLOW_ATTEMPT_MS + 100));
    // Now it is slow, the slow share is full, and it does not wait here: it parks.
    const started = Date.now();
    expect(await acquire(gate, turning, randomUUID())).toBeGreaterThan(0);
    expect(Date.now() - started).toBeLessThan(100);
  }, 10_000);

  it('hands a freed slow slot to the slow endpoint that has waited longest for one', async () => {
    const gate = newGate();
    const hogs = [randomUUID(), randomUUID()];
    for (const endpointId of hogs) await teach(gate, endpointId, 8_000);
    const [hogA, hogB] = await Promise.all(hogs.map((endpointId) => acquireMany(gate, endpointId, CAP)));
    expect([...hogA!, ...hogB!]).toHaveLength(SLOW_SHARE);

    // A slow endpoint that answers, shut out by the hogs: its job parks, as a delayed job.
    const patient = randomUUID();
    await teach(gate, patient, 2_000);
    const parkedId = await delayedJob(patient);
    expect(await acquire(gate, patient, parkedId)).toBe(1);
    // The hog parks a job of its own as well, which it would otherwise promote itself.
    const hogParked = await delayedJob(hogs[0]!);
    expect(await acquire(gate, hogs[0]!, hogParked)).toBeGreaterThan(0);

    await gate.release(hogs[0]!, hogA![0]!, 8_000);
    expect(await queue.getJobState(parkedId)).toBe('waiting');
    expect(await queue.getJobState(hogParked)).toBe('delayed');
    // The promoted job arrives and takes the slot it was owed.
    expect(await gate.acquire(patient, parkedId)).toBe(0);
  });

  it('counts promoted jobs on their way as room taken, until they are a second late', async () => {
    const gate = newGate();
    const endpointId = randomUUID();
    await teach(gate, endpointId, 2_000); // slow: no job waits here, every one beyond the cap parks
    const running = await acquireMany(gate, endpointId, CAP);
    expect(running).toHaveLength(CAP);
    const parked: string[] = [];
    for (let index = 0; index < 5; index += 1) {
      const deliveryId = await delayedJob(endpointId);
      expect(await acquire(gate, endpointId, deliveryId)).toBe(index + 1);
      parked.push(deliveryId);
    }
    const states = () => Promise.all(parked.map((deliveryId) => queue.getJobState(deliveryId)));

    // Two slots free before the first promoted job is back: one promotion each, not 1 + 2.
    await gate.release(endpointId, running[0]!, 2_000);
    await gate.release(endpointId, running[1]!, 2_000);
    expect(await states()).toEqual(['waiting', 'waiting', 'delayed', 'delayed', 'delayed']);

    // Promoted jobs that never came back (another replica took them) stop holding room.
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    await gate.release(endpointId, running[2]!, 2_000);
    expect(await states()).toEqual(Array(5).fill('waiting'));
  });

  it('forgets an endpoint idle for ten minutes even when its last promoted job never came back', async () => {
    const gate = newGate();
    const endpointId = randomUUID();
    const probe = randomUUID();
    expect(await gate.acquire(endpointId, probe)).toBe(0);
    const parkedId = await delayedJob(endpointId);
    expect(await acquire(gate, endpointId, parkedId)).toBe(1);
    await gate.release(endpointId, probe, 20); // promotes parkedId, which another replica then takes
    expect(await queue.getJobState(parkedId)).toBe('waiting');

    const now = Date.now();
    const clock = jest.spyOn(Date, 'now').mockReturnValue(now + 11 * 60_000);
    try {
      await teach(gate, randomUUID(), 20); // a new endpoint is when idle ones are forgotten
      // Forgotten: the endpoint is probed again with one attempt, not given its 10.
      expect(await gate.acquire(endpointId, randomUUID())).toBe(0);
      expect(await gate.acquire(endpointId, randomUUID())).toBeGreaterThan(0);
    } finally {
      clock.mockRestore();
    }
  });

  it('promotes a job that was handed a slot while still on its way to delayed, once it is there', async () => {
    const gate = newGate();
    const endpointId = await busyQuickEndpoint(gate);
    const held = await acquireMany(gate, endpointId, CAP - 1);
    expect(held).toHaveLength(CAP - 1);
    // At the cap: the next job waits a second here, then starts parking...
    const late = randomUUID();
    expect(await gate.acquire(endpointId, late)).toBe(1);
    // ...and a slot frees before it is delayed in Redis: too early to promote it.
    await gate.release(endpointId, held[0]!, 20);
    await queue.add(DELIVERY_JOB_NAME, { deliveryId: late, endpointId }, { jobId: late, delay: 60_000 });
    expect(await queue.getJobState(late)).toBe('delayed');
    // Parked now: it is promoted at once, not at its own wake-up.
    await gate.parked(endpointId, late);
    expect(await queue.getJobState(late)).toBe('waiting');
  });
});
