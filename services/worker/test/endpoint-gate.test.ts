import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
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

/** Lets the gate learn how long a slow endpoint's attempts take (it remembers slow ones). */
async function teach(gate: EndpointGate, endpointId: string, attemptMs: number): Promise<void> {
  const deliveryId = randomUUID();
  expect(await gate.acquire(endpointId, deliveryId)).toBe(0);
  await gate.release(endpointId, deliveryId, attemptMs);
}

/**
 * A quick endpoint in use: one attempt answered quickly while the next was already waiting,
 * which now holds a slot. (An idle quick endpoint is forgotten, and probed again next time.)
 */
async function busyQuickEndpoint(gate: EndpointGate): Promise<string> {
  const endpointId = randomUUID();
  const probe = randomUUID();
  expect(await gate.acquire(endpointId, probe)).toBe(0);
  const next = gate.acquire(endpointId, randomUUID());
  await gate.release(endpointId, probe, 20);
  expect(await next).toBe(0);
  return endpointId;
}

/** Tries `count` acquires at once (none waits: the endpoint is slow or idle); returns the granted ids. */
async function acquireMany(gate: EndpointGate, endpointId: string, count: number): Promise<string[]> {
  const ids = Array.from({ length: count }, () => randomUUID());
  const places = await Promise.all(ids.map((id) => gate.acquire(endpointId, id)));
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
    // One more waits here while the probe is out; the rest park at once, holding no slot.
    const next = gate.acquire(fresh, randomUUID());
    const parked = Array.from({ length: CAP + 2 }, () => randomUUID());
    for (const id of parked) {
      await queue.add(DELIVERY_JOB_NAME, { deliveryId: id, endpointId: fresh }, { jobId: id, delay: 60_000 });
    }
    const started = Date.now();
    const places = await Promise.all(parked.map((id) => gate.acquire(fresh, id)));
    expect(places).toEqual(parked.map((_id, index) => index + 1));
    expect(Date.now() - started).toBeLessThan(500);

    // A quick answer: the waiter takes the probe's slot, and parked jobs are promoted to fill
    // the rest of the cap at once, oldest first.
    await gate.release(fresh, probe, 15);
    expect(await next).toBe(0);
    const states = await Promise.all(parked.map((id) => queue.getJobState(id)));
    expect(states).toEqual([...Array<string>(CAP - 1).fill('waiting'), 'delayed', 'delayed', 'delayed']);
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
    expect(await gate.acquire(turning, randomUUID())).toBeGreaterThan(0);
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
    const parkedId = randomUUID();
    await queue.add(
      DELIVERY_JOB_NAME,
      { deliveryId: parkedId, endpointId: patient },
      { jobId: parkedId, delay: 60_000 },
    );
    expect(await gate.acquire(patient, parkedId)).toBe(1);
    // The hog parks a job of its own as well, which it would otherwise promote itself.
    const hogParked = randomUUID();
    await queue.add(
      DELIVERY_JOB_NAME,
      { deliveryId: hogParked, endpointId: hogs[0]! },
      { jobId: hogParked, delay: 60_000 },
    );
    expect(await gate.acquire(hogs[0]!, hogParked)).toBeGreaterThan(0);

    await gate.release(hogs[0]!, hogA![0]!, 8_000);
    expect(await queue.getJobState(parkedId)).toBe('waiting');
    expect(await queue.getJobState(hogParked)).toBe('delayed');
    // The promoted job arrives and takes the slot it was owed.
    expect(await gate.acquire(patient, parkedId)).toBe(0);
  });
});
