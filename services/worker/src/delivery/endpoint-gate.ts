import type { EndpointAllowance } from './delivery-scheduler.js';

/**
 * Isolation between endpoints. BullMQ (open source) has one concurrency for a whole queue,
 * so receivers that hang until the timeout could occupy every slot of a worker and starve the
 * others. The gate bounds, in this process:
 * - each endpoint to `maxInFlight` attempts at once; an endpoint this process has not seen
 *   answer (or not for ten minutes) gets one (a probe) until it has: a receiver costs one
 *   slot, not `maxInFlight`, before we know how quick it is;
 * - the slow endpoints (their recent attempts take a second or more on average, or one has
 *   been in flight for more than a second) to `maxSlowInFlight` attempts at once between
 *   them all: half the worker's slots by default. However many receivers hang, the other
 *   half stays free for the quick ones. A freed slow slot goes first to the slow endpoint
 *   that has waited longest for one, so a receiver that is slow but answers is not shut out
 *   by ones that never do.
 *
 * The same bounds size what the scheduler releases to Redis (`allowances`), so a job that
 * finds no slot is rare: one released for a slow endpoint just as another took the share,
 * or one of a new endpoint released beside its probe by another replica. Such a job is not
 * kept waiting here (it would hold one of the worker's slots): its delivery goes back to the
 * backlog, and the endpoint is woken again when it has room (`release` says which).
 *
 * Not bounded by the slow share: attempts that started before their endpoint was known to be
 * slow. An endpoint counts as slow one second into an attempt, and that attempt ends at the
 * timeout, so a receiver that starts hanging costs the others at most its cap (its probe, if
 * new) for one timeout, once.
 *
 * The bounds are per process: they protect this worker's slots, which is what isolation
 * needs. What is queued in Postgres bounds an endpoint across replicas as well.
 */

/** An endpoint whose attempts take this long (on average, or one of them so far) is slow. */
export const SLOW_ATTEMPT_MS = 1_000;
/**
 * What the gate learnt about an endpoint is kept this long after its last attempt, so that
 * a quick endpoint with gaps in its traffic is not probed again after each gap.
 */
const FORGET_IDLE_MS = 10 * 60_000;

interface Slot {
  startedAt: number;
  /** One of the slow endpoints' shared slots. */
  slow: boolean;
}

interface EndpointLine {
  running: Map<string, Slot>;
  /** Moving average of the endpoint's attempt durations; undefined until one has finished. */
  attemptMs?: number;
  /** When it last had nothing running here (undefined while it has). */
  idleSince?: number;
}

export interface EndpointGateOptions {
  maxInFlight: number;
  /** Attempts in flight at once to slow endpoints, all of them together. */
  maxSlowInFlight: number;
  now?: () => number;
}

function movingAverage(average: number | undefined, sample: number): number {
  return average === undefined ? sample : average * 0.7 + sample * 0.3;
}

export class EndpointGate {
  private readonly lines = new Map<string, EndpointLine>();
  private readonly now: () => number;
  private slowInFlight = 0;
  /** Slots taken in this process, every endpoint's together. */
  private inFlightTotal = 0;
  private lastForgotten = 0;
  /** Slow endpoints whose jobs found every slow slot taken, longest waiting first. */
  private readonly waitingForSlowSlot = new Set<string>();
  /**
   * Deliveries whose request has ended and whose result is being recorded: still queued in
   * Postgres for a moment, but no longer in flight, so not counted against their endpoint's room.
   */
  private readonly recordingIds = new Set<string>();
  /**
   * Deliveries claimed ahead by a job (spares, see delivery-processor.ts): queued and leased in
   * Postgres, sent as soon as the job's request in flight succeeds; not in flight until then.
   */
  private readonly spareIds = new Set<string>();

  constructor(private readonly options: EndpointGateOptions) {
    this.now = options.now ?? Date.now;
  }

  private line(endpointId: string): EndpointLine {
    let line = this.lines.get(endpointId);
    if (!line) {
      this.forgetIdleEndpoints();
      line = { running: new Map() };
      this.lines.set(endpointId, line);
    }
    line.idleSince = undefined;
    return line;
  }

  /** Drops endpoints idle for FORGET_IDLE_MS: looked at when a new endpoint comes, at most once a minute. */
  private forgetIdleEndpoints(): void {
    const now = this.now();
    if (now - this.lastForgotten < FORGET_IDLE_MS / 10) return;
    this.lastForgotten = now;
    for (const [endpointId, line] of this.lines) {
      if (line.idleSince !== undefined && now - line.idleSince > FORGET_IDLE_MS) this.lines.delete(endpointId);
    }
  }

  private isSlow(line: EndpointLine): boolean {
    if ((line.attemptMs ?? 0) >= SLOW_ATTEMPT_MS) return true;
    const longAgo = this.now() - SLOW_ATTEMPT_MS;
    for (const slot of line.running.values()) if (slot.startedAt <= longAgo) return true;
    return false;
  }

  /** The endpoint's own cap: one probe until it has answered once. */
  private capOf(line: EndpointLine | undefined): number {
    return line?.attemptMs === undefined ? 1 : this.options.maxInFlight;
  }

  /**
   * Takes a slot for the delivery if the endpoint's cap, and the slow share if it is slow,
   * allow. False: the caller gives the delivery back to the backlog; a slow endpoint is then
   * owed the next slow slot that frees.
   */
  acquire(endpointId: string, deliveryId: string): boolean {
    const line = this.line(endpointId);
    const slow = this.isSlow(line);
    const capped = line.running.size >= this.capOf(line);
    if (!capped && (!slow || this.slowInFlight < this.options.maxSlowInFlight)) {
      if (slow) this.slowInFlight += 1;
      this.inFlightTotal += 1;
      line.running.set(deliveryId, { startedAt: this.now(), slow });
      return true;
    }
    if (slow && !capped) this.waitingForSlowSlot.add(endpointId);
    this.noteIfIdle(line);
    return false;
  }

  /**
   * Frees the slot; `attemptMs` (when an attempt was made) teaches the gate how quick the
   * endpoint is. Returns the endpoints that may have room now: this one, and the slow
   * endpoint that has waited longest for the slow slot this frees. `recording`: the request
   * has ended and its result is being recorded (see `notInFlight()`) until `recorded`.
   */
  release(endpointId: string, deliveryId: string, attemptMs?: number, { recording = false } = {}): string[] {
    if (recording) this.recordingIds.add(deliveryId);
    const line = this.line(endpointId);
    const freed = line.running.get(deliveryId);
    line.running.delete(deliveryId);
    if (freed) this.inFlightTotal -= 1;
    if (freed?.slow) this.slowInFlight -= 1;
    if (attemptMs !== undefined && freed) line.attemptMs = movingAverage(line.attemptMs, attemptMs);
    this.noteIfIdle(line);
    const owed = freed?.slow ? this.nextWaitingForSlowSlot(endpointId) : undefined;
    return owed ? [endpointId, owed] : [endpointId];
  }

  /**
   * After a success, the slot goes on to the endpoint's next delivery, which the same job has
   * claimed (see delivery-processor.ts): the endpoint's room is unchanged, one leaves and one
   * comes. The finished one is being recorded (see `notInFlight()`) until `recorded`.
   */
  handOver(endpointId: string, fromId: string, toId: string, attemptMs: number): void {
    this.recordingIds.add(fromId);
    this.spareIds.delete(toId);
    const line = this.line(endpointId);
    const slot = line.running.get(fromId);
    line.running.delete(fromId);
    if (slot) line.attemptMs = movingAverage(line.attemptMs, attemptMs);
    else this.inFlightTotal += 1;
    line.running.set(toId, { startedAt: this.now(), slow: slot?.slow ?? false });
  }

  /** The result of a delivery released with `recording` is written: it counts as queued no more. */
  recorded(deliveryId: string): void {
    this.recordingIds.delete(deliveryId);
  }

  /** A job has claimed this delivery ahead (a spare): queued, not in flight, until `handOver` to it or `spareGone`. */
  holdSpare(deliveryId: string): void {
    this.spareIds.add(deliveryId);
  }

  /** The spare went back to the backlog unsent. */
  spareGone(deliveryId: string): void {
    this.spareIds.delete(deliveryId);
  }

  /**
   * Deliveries marked queued in Postgres that are not in flight, so not to be counted against
   * their endpoint's room: those whose request has ended and whose result is being recorded,
   * and spares.
   */
  notInFlight(): string[] {
    return [...this.recordingIds, ...this.spareIds];
  }

  /** The moving average of the endpoint's attempt durations; undefined until one has finished here. */
  attemptMs(endpointId: string): number | undefined {
    return this.lines.get(endpointId)?.attemptMs;
  }

  /** Attempts in flight in this process, to every endpoint. */
  inFlight(): number {
    return this.inFlightTotal;
  }

  /** Answered, and not slow: its room is its whole cap, whatever the others do. */
  isQuick(endpointId: string): boolean {
    const line = this.lines.get(endpointId);
    return line?.attemptMs !== undefined && !this.isSlow(line);
  }

  /**
   * How many deliveries of each endpoint may be queued at once now, counting those already
   * queued (Postgres subtracts them): its cap; one for an endpoint not seen answer; for a
   * slow endpoint, what it runs plus what is left of the slow share, handed out in the order
   * asked, so that one call never promises the same slow slot twice.
   */
  allowances(endpointIds: readonly string[]): EndpointAllowance[] {
    let slowShareLeft = this.options.maxSlowInFlight - this.slowInFlight;
    return endpointIds.map((endpointId) => {
      const line = this.lines.get(endpointId);
      const cap = this.capOf(line);
      if (!line || !this.isSlow(line)) return { endpointId, allowance: cap };
      const more = Math.max(0, Math.min(cap - line.running.size, slowShareLeft));
      slowShareLeft -= more;
      // Shut out by the share: owed a slow slot when one frees, like a job refused by `acquire`.
      if (more === 0 && line.running.size < cap) this.waitingForSlowSlot.add(endpointId);
      return { endpointId, allowance: line.running.size + more };
    });
  }

  /** Another slow endpoint that found every slow slot taken, longest waiting first. */
  private nextWaitingForSlowSlot(releasing: string): string | undefined {
    for (const endpointId of this.waitingForSlowSlot) {
      this.waitingForSlowSlot.delete(endpointId);
      if (endpointId !== releasing) return endpointId;
    }
    return undefined;
  }

  private noteIfIdle(line: EndpointLine): void {
    if (line.running.size === 0) line.idleSince = this.now();
  }
}
