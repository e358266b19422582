import { randomUUID } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import { EndpointGate, SLOW_ATTEMPT_MS } from '../src/delivery/endpoint-gate.js';

/** The gate's bounds, slot by slot, on a clock of the test's own: no I/O, no waiting. */

const CAP = 10;
const SLOW_SHARE = 20;

function newGate() {
  const clock = { now: 1_000_000 };
  const gate = new EndpointGate({ maxInFlight: CAP, maxSlowInFlight: SLOW_SHARE, now: () => clock.now });
  return { gate, clock };
}

/** Lets the gate learn how long the endpoint's attempts take. */
function teach(gate: EndpointGate, endpointId: string, attemptMs: number): void {
  const deliveryId = randomUUID();
  expect(gate.acquire(endpointId, deliveryId)).toBe(true);
  gate.release(endpointId, deliveryId, attemptMs);
}

/** Tries `count` acquires; returns the granted ids. */
function acquireMany(gate: EndpointGate, endpointId: string, count: number): string[] {
  return Array.from({ length: count }, () => randomUUID()).filter((id) => gate.acquire(endpointId, id));
}

const allowance = (gate: EndpointGate, endpointId: string) => gate.allowances([endpointId])[0]!.allowance;

describe('the endpoint gate', () => {
  it('lets slow endpoints hold the slow share between them, never more, while a quick one keeps its cap', () => {
    const { gate } = newGate();
    const hanging = Array.from({ length: 10 }, () => randomUUID());
    for (const endpointId of hanging) teach(gate, endpointId, 8_000);
    const quick = randomUUID();
    teach(gate, quick, 20);

    // Ten hanging endpoints want 10 slots each: 20 between them, whatever their backlogs.
    const granted = hanging.map((endpointId) => acquireMany(gate, endpointId, CAP));
    expect(granted.flat()).toHaveLength(SLOW_SHARE);
    expect(Math.max(...granted.map((ids) => ids.length))).toBeLessThanOrEqual(CAP);
    // The quick endpoint is not affected: its whole cap, at once.
    expect(allowance(gate, quick)).toBe(CAP);
    expect(acquireMany(gate, quick, CAP)).toHaveLength(CAP);
    expect(acquireMany(gate, quick, 1)).toHaveLength(0);

    // A slow slot that frees is taken again by a slow endpoint; the share is never exceeded.
    const owner = hanging[granted.findIndex((ids) => ids.length > 0)]!;
    gate.release(owner, granted.find((ids) => ids.length > 0)![0]!, 8_000);
    const again = hanging.map((endpointId) => acquireMany(gate, endpointId, 1));
    expect(again.flat()).toHaveLength(1);
  });

  it('allows slow endpoints, asked together, only the slow share left, never the same slot twice', () => {
    const { gate } = newGate();
    const slow = Array.from({ length: 4 }, () => randomUUID());
    for (const endpointId of slow) teach(gate, endpointId, 3_000);
    const running = acquireMany(gate, slow[0]!, 5);
    expect(running).toHaveLength(5);

    // 15 slow slots left: the first asked gets up to its cap (5 running + 5), the next 10, then none.
    expect(gate.allowances(slow).map((item) => item.allowance)).toEqual([CAP, CAP, 0, 0]);
  });

  it('allows an endpoint it has not seen answer one attempt, then its cap once that was quick', () => {
    const { gate } = newGate();
    const fresh = randomUUID();
    expect(allowance(gate, fresh)).toBe(1);
    const probe = randomUUID();
    expect(gate.acquire(fresh, probe)).toBe(true);
    // Another of its jobs (released by another replica, say) finds no slot and goes back.
    expect(gate.acquire(fresh, randomUUID())).toBe(false);

    // A quick answer: the endpoint is woken, with its whole cap.
    expect(gate.release(fresh, probe, 15)).toEqual([fresh]);
    expect(allowance(gate, fresh)).toBe(CAP);
    expect(acquireMany(gate, fresh, CAP + 2)).toHaveLength(CAP);
  });

  it('treats an endpoint as slow once one attempt has been in flight for more than a second', () => {
    const { gate, clock } = newGate();
    const turning = randomUUID();
    teach(gate, turning, 20);
    expect(gate.acquire(turning, randomUUID())).toBe(true); // the one that will hang
    // Fill the slow share with other endpoints' attempts.
    for (let index = 0; index < SLOW_SHARE / CAP; index += 1) {
      const slow = randomUUID();
      teach(gate, slow, 8_000);
      expect(acquireMany(gate, slow, CAP)).toHaveLength(CAP);
    }
    // Quick so far: another attempt gets a slot at once, and it may have its cap queued.
    expect(gate.acquire(turning, randomUUID())).toBe(true);
    expect(allowance(gate, turning)).toBe(CAP);
    clock.now += SLOW_ATTEMPT_MS + 100;
    // Now it is slow and the slow share is full: no more than it runs, and no new slot.
    expect(allowance(gate, turning)).toBe(2);
    expect(gate.acquire(turning, randomUUID())).toBe(false);
  });

  it('hands a freed slow slot to the slow endpoint that has waited longest for one', () => {
    const { gate } = newGate();
    const hogs = [randomUUID(), randomUUID()];
    for (const endpointId of hogs) teach(gate, endpointId, 8_000);
    const [hogA, hogB] = hogs.map((endpointId) => acquireMany(gate, endpointId, CAP));
    expect([...hogA!, ...hogB!]).toHaveLength(SLOW_SHARE);

    // Two slow endpoints that answer, shut out by the hogs: one found no slot, one was given no room.
    const patient = randomUUID();
    teach(gate, patient, 2_000);
    expect(gate.acquire(patient, randomUUID())).toBe(false);
    const later = randomUUID();
    teach(gate, later, 2_000);
    expect(allowance(gate, later)).toBe(0);

    // Each freed slow slot wakes, beside its own endpoint, the one that has waited longest.
    expect(gate.release(hogs[0]!, hogA![0]!, 8_000)).toEqual([hogs[0], patient]);
    expect(allowance(gate, patient)).toBe(1);
    expect(gate.acquire(patient, randomUUID())).toBe(true);
    expect(gate.release(hogs[1]!, hogB![0]!, 8_000)).toEqual([hogs[1], later]);
    expect(gate.release(hogs[1]!, hogB![1]!, 8_000)).toEqual([hogs[1]]);
  });

  it('frees the slot when the request ends, and lists the delivery as recording until it is recorded', () => {
    const { gate } = newGate();
    const endpointId = randomUUID();
    teach(gate, endpointId, 20);
    const running = acquireMany(gate, endpointId, CAP);
    expect(acquireMany(gate, endpointId, 1)).toHaveLength(0);
    expect(gate.release(endpointId, running[0]!, 20, { recording: true })).toEqual([endpointId]);
    expect(gate.notInFlight()).toEqual([running[0]]);
    expect(acquireMany(gate, endpointId, 2)).toHaveLength(1);
    gate.recorded(running[0]!);
    expect(gate.notInFlight()).toEqual([]);
  });

  it('lists a spare as not in flight until the slot is handed over to it or it goes back', () => {
    const { gate } = newGate();
    const endpointId = randomUUID();
    teach(gate, endpointId, 20);
    const [running] = acquireMany(gate, endpointId, 1);
    const [sent, returned] = [randomUUID(), randomUUID()];
    gate.holdSpare(sent);
    gate.holdSpare(returned);
    expect(gate.notInFlight().sort()).toEqual([sent, returned].sort());
    // The spare is sent: in flight now, in the slot of the one being recorded.
    gate.handOver(endpointId, running!, sent, 20);
    expect(gate.notInFlight().sort()).toEqual([running, returned].sort());
    gate.recorded(running!);
    gate.spareGone(returned);
    expect(gate.notInFlight()).toEqual([]);
    // One slot taken all along: the spares never took room.
    expect(acquireMany(gate, endpointId, CAP)).toHaveLength(CAP - 1);
  });

  it('hands the slot of a finished delivery to the next one its job claimed: the room is unchanged', () => {
    const { gate } = newGate();
    const endpointId = randomUUID();
    teach(gate, endpointId, 20);
    const running = acquireMany(gate, endpointId, CAP);
    expect(running).toHaveLength(CAP);
    const next = randomUUID();
    gate.handOver(endpointId, running[0]!, next, 20);
    // Still full: the next holds the slot; the finished one is being recorded.
    expect(gate.acquire(endpointId, randomUUID())).toBe(false);
    expect(gate.notInFlight()).toEqual([running[0]]);
    gate.recorded(running[0]!);
    expect(gate.release(endpointId, next, 20)).toEqual([endpointId]);
    expect(gate.acquire(endpointId, randomUUID())).toBe(true);
    expect(gate.isQuick(endpointId)).toBe(true);
  });

  it('counts the attempts in flight to every endpoint: taken, handed over, refused, released', () => {
    const { gate } = newGate();
    const [quick, other] = [randomUUID(), randomUUID()];
    teach(gate, quick, 20);
    expect(gate.inFlight()).toBe(0);
    const running = acquireMany(gate, quick, CAP + 3);
    acquireMany(gate, other, 3);
    // The quick one's cap, and the other's single probe.
    expect(gate.inFlight()).toBe(CAP + 1);
    gate.handOver(quick, running[0]!, randomUUID(), 20);
    expect(gate.inFlight()).toBe(CAP + 1);
    gate.release(quick, running[1]!, 20);
    gate.release(quick, running[1]!, 20);
    gate.release(quick, randomUUID(), 20);
    expect(gate.inFlight()).toBe(CAP);
  });

  it('forgets an endpoint idle for ten minutes: it is probed again with one attempt', () => {
    const { gate, clock } = newGate();
    const endpointId = randomUUID();
    teach(gate, endpointId, 20);
    expect(allowance(gate, endpointId)).toBe(CAP);

    clock.now += 11 * 60_000;
    teach(gate, randomUUID(), 20); // a new endpoint is when idle ones are forgotten
    expect(allowance(gate, endpointId)).toBe(1);
    expect(acquireMany(gate, endpointId, 2)).toHaveLength(1);
  });
});
