import { describe, expect, it } from '@jest/globals';
import { createLogger } from '@retention/runtime';
import {
  DeliveryScheduler,
  type EndpointAllowance,
  type ReleasedDelivery,
  type SchedulerClock,
  type SchedulerPort,
} from '../src/delivery/delivery-scheduler.js';

/**
 * The scheduler against an in-memory backlog and a clock of the test's own: which deliveries
 * are released, in what order, and when, in milliseconds. (The Postgres and Redis side of the
 * port is exercised by the worker's tests: delivery, isolation, replicas, faults, flush.)
 */

class FakeClock implements SchedulerClock {
  current = 0;
  private timers: Array<{ at: number; callback: () => void; handle: number }> = [];
  private nextHandle = 1;

  now(): number {
    return this.current;
  }

  setTimeout(callback: () => void, ms: number): unknown {
    const handle = this.nextHandle++;
    this.timers.push({ at: this.current + ms, callback, handle });
    return handle;
  }

  clearTimeout(handle: unknown): void {
    this.timers = this.timers.filter((timer) => timer.handle !== handle);
  }

  /** Moves time on, firing each timer due on the way at its own time. */
  async advance(ms: number, settle: () => Promise<void>): Promise<void> {
    const until = this.current + ms;
    for (;;) {
      const next = this.timers.filter((timer) => timer.at <= until).sort((a, b) => a.at - b.at)[0];
      if (!next) break;
      this.timers = this.timers.filter((timer) => timer !== next);
      this.current = next.at;
      next.callback();
      await settle();
    }
    this.current = until;
  }

  get pending(): number[] {
    return this.timers.map((timer) => timer.at).sort((a, b) => a - b);
  }
}

interface Delivery {
  id: string;
  endpointId: string;
  dueAt: number;
  queued: boolean;
}

/** Postgres's backlog and Redis's jobs, as the port's contract says, in memory. */
class MemoryBacklog implements SchedulerPort {
  readonly deliveries: Delivery[] = [];
  /** Job ids in "Redis", in the order they were added. */
  readonly jobs: string[] = [];
  releaseCalls = 0;
  failNextRelease = false;

  constructor(private readonly clock: FakeClock) {}

  add(endpointId: string, id: string, dueAt = this.clock.now()): void {
    this.deliveries.push({ id, endpointId, dueAt, queued: false });
  }

  /** The worker ended an attempt: the delivery is done, or back in the backlog due at `retryAt`. */
  finish(id: string, retryAt?: number): void {
    const index = this.deliveries.findIndex((delivery) => delivery.id === id);
    const delivery = this.deliveries[index]!;
    if (retryAt === undefined) this.deliveries.splice(index, 1);
    else Object.assign(delivery, { queued: false, dueAt: retryAt });
    this.jobs.splice(this.jobs.indexOf(id), 1);
  }

  queuedOf(endpointId: string): string[] {
    return this.deliveries.filter((d) => d.endpointId === endpointId && d.queued).map((d) => d.id);
  }

  release(allowances: readonly EndpointAllowance[], notCounted: readonly string[]): Promise<ReleasedDelivery[]> {
    this.releaseCalls += 1;
    if (this.failNextRelease) {
      this.failNextRelease = false;
      return Promise.reject(new Error('Postgres is away'));
    }
    const released: ReleasedDelivery[] = [];
    for (const { endpointId, allowance } of allowances) {
      const room = allowance - this.queuedOf(endpointId).filter((id) => !notCounted.includes(id)).length;
      const due = this.deliveries
        .filter((d) => d.endpointId === endpointId && !d.queued && d.dueAt <= this.clock.now())
        .sort((a, b) => a.dueAt - b.dueAt)
        .slice(0, Math.max(0, room));
      for (const delivery of due) {
        delivery.queued = true;
        released.push({ deliveryId: delivery.id, endpointId, queuedAt: new Date(this.clock.now()) });
      }
    }
    return Promise.resolve(released);
  }

  enqueue(released: readonly ReleasedDelivery[]): Promise<void> {
    this.jobs.push(...released.map((item) => item.deliveryId));
    return Promise.resolve();
  }

  backlog(): Promise<Array<{ endpointId: string; dueAt: Date }>> {
    const earliest = new Map<string, number>();
    for (const d of this.deliveries) {
      if (!d.queued) earliest.set(d.endpointId, Math.min(earliest.get(d.endpointId) ?? Infinity, d.dueAt));
    }
    return Promise.resolve([...earliest].map(([endpointId, dueAt]) => ({ endpointId, dueAt: new Date(dueAt) })));
  }
}

const POLL_MS = 1_000;

function setUp(allowanceOf: (endpointId: string) => number = () => 3, recording: string[] = []) {
  const clock = new FakeClock();
  const backlog = new MemoryBacklog(clock);
  const scheduler = new DeliveryScheduler({
    port: backlog,
    allowances: (endpointIds) => endpointIds.map((endpointId) => ({ endpointId, allowance: allowanceOf(endpointId) })),
    notInFlight: () => recording,
    logger: createLogger('scheduler-test', 'silent'),
    pollMs: POLL_MS,
    clock,
  });
  const settle = () => scheduler.idle();
  return { clock, backlog, scheduler, settle };
}

describe('the delivery scheduler', () => {
  it('keeps only as many jobs per endpoint as it may run, releasing the next, oldest first, as each ends', async () => {
    const { backlog, scheduler, settle } = setUp();
    // Due in this order, all due already.
    for (let index = 0; index < 1_000; index += 1) {
      backlog.add('busy', `b${String(index).padStart(4, '0')}`, index - 1_000);
    }
    backlog.add('quiet', 'q1', -1_000);
    scheduler.start();
    await settle();
    expect(backlog.jobs).toEqual(['b0000', 'b0001', 'b0002', 'q1']);

    // Each attempt that ends frees room for exactly one more, in order of due time.
    backlog.finish('b0001');
    scheduler.wake(['busy']);
    await settle();
    expect(backlog.jobs).toEqual(['b0000', 'b0002', 'q1', 'b0003']);
    for (const id of ['b0000', 'b0002', 'b0003']) backlog.finish(id);
    scheduler.wake(['busy']);
    scheduler.wake(['busy', 'quiet']);
    await settle();
    expect(backlog.jobs).toEqual(['q1', 'b0004', 'b0005', 'b0006']);
    expect(backlog.queuedOf('busy')).toHaveLength(3);
    await scheduler.stop();
  });

  it('releases the next while the last one’s result is recorded: its request has ended', async () => {
    const recording: string[] = [];
    const { backlog, scheduler, settle } = setUp(() => 2, recording);
    for (let index = 0; index < 5; index += 1) backlog.add('e', `d${index}`, index - 10);
    scheduler.start();
    await settle();
    expect(backlog.jobs).toEqual(['d0', 'd1']);
    // d0's request ended; its record (and the end of its job) is on the way.
    recording.push('d0');
    scheduler.wake(['e']);
    await settle();
    expect(backlog.jobs).toEqual(['d0', 'd1', 'd2']);
    expect(backlog.queuedOf('e')).toEqual(['d0', 'd1', 'd2']);
    await scheduler.stop();
  });

  it('merges the wakes that come while a release runs into one more release', async () => {
    const { backlog, scheduler, settle } = setUp(() => 1);
    scheduler.wake(['a']); // not started: nothing happens
    await settle();
    expect(backlog.releaseCalls).toBe(0);
    scheduler.start();
    await settle();
    const calls = backlog.releaseCalls;
    for (const endpointId of ['a', 'b', 'c', 'd']) backlog.add(endpointId, `${endpointId}1`);
    scheduler.wake(['a']);
    scheduler.wake(['b']);
    scheduler.wake(['c', 'd']);
    await settle();
    // One round for the first wake, one for the three that came while it ran.
    expect(backlog.releaseCalls - calls).toBe(2);
    expect(backlog.jobs).toEqual(['a1', 'b1', 'c1', 'd1']);
    await scheduler.stop();
  });

  it('releases a retry when it falls due, not before, and not a poll later', async () => {
    const { clock, backlog, scheduler, settle } = setUp();
    backlog.add('e', 'd1');
    scheduler.start();
    await settle();
    expect(backlog.jobs).toEqual(['d1']);

    // The attempt failed: the retry waits in the backlog for 5 s.
    backlog.finish('d1', clock.now() + 5_000);
    scheduler.wake(['e']);
    scheduler.wakeAt(clock.now() + 5_000);
    await settle();
    expect(backlog.jobs).toEqual([]);
    await clock.advance(4_999, settle);
    expect(backlog.jobs).toEqual([]);
    await clock.advance(1, settle);
    expect(backlog.jobs).toEqual(['d1']);
    await scheduler.stop();
  });

  it("finds what became due without a wake (another process's retries, resends) within a poll", async () => {
    const { clock, backlog, scheduler, settle } = setUp();
    scheduler.start();
    await settle();
    backlog.add('e', 'late', clock.now() + 2_500);
    backlog.add('e', 'now', clock.now());
    await clock.advance(POLL_MS, settle);
    expect(backlog.jobs).toEqual(['now']);
    // The poll saw the next one due at 2.5 s and looks exactly then.
    expect(clock.pending).toEqual([2_000]);
    await clock.advance(POLL_MS, settle);
    expect(clock.pending).toEqual([2_500]);
    await clock.advance(500, settle);
    expect(backlog.jobs).toEqual(['now', 'late']);
    await scheduler.stop();
  });

  it('gives an endpoint no more than its allowance, and nothing while it has none', async () => {
    let allowance = 1;
    const { clock, backlog, scheduler, settle } = setUp(() => allowance);
    for (let index = 0; index < 5; index += 1) backlog.add('probed', `p${index}`, index);
    scheduler.start();
    await settle();
    expect(backlog.jobs).toEqual(['p0']);
    // Polls come and go: the probe is out, nothing more is released.
    await clock.advance(3 * POLL_MS, settle);
    expect(backlog.jobs).toEqual(['p0']);
    // It answered quickly: its cap.
    allowance = 4;
    backlog.finish('p0');
    scheduler.wake(['probed']);
    await settle();
    expect(backlog.jobs).toEqual(['p1', 'p2', 'p3', 'p4']);
    // A slow endpoint shut out of the slow share: allowance 0, not even looked up.
    allowance = 0;
    const calls = backlog.releaseCalls;
    scheduler.wake(['probed']);
    await settle();
    expect(backlog.releaseCalls).toBe(calls);
    await scheduler.stop();
  });

  it('after a failed release, the next poll releases what it could not', async () => {
    const { clock, backlog, scheduler, settle } = setUp();
    backlog.failNextRelease = true;
    backlog.add('e', 'd1');
    scheduler.start();
    await settle();
    expect(backlog.jobs).toEqual([]);
    await clock.advance(POLL_MS, settle);
    expect(backlog.jobs).toEqual(['d1']);
    await scheduler.stop();
  });

  it('releases nothing once stopped, and leaves no timer behind', async () => {
    const { clock, backlog, scheduler, settle } = setUp();
    scheduler.start();
    await settle();
    await scheduler.stop();
    backlog.add('e', 'd1');
    scheduler.wake(['e']);
    scheduler.wakeAt(clock.now() + 10);
    await clock.advance(10 * POLL_MS, settle);
    expect(backlog.jobs).toEqual([]);
    expect(clock.pending).toEqual([]);
  });
});
