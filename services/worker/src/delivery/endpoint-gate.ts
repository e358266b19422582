import { ErrorCode, Job, type Queue } from 'bullmq';
import type { Logger } from '@retention/runtime';
import { DELIVERY_JOB_NAME, type DeliveryJobData } from '../queues.js';

/**
 * Isolation between endpoints. BullMQ (open source) has one concurrency for a whole queue,
 * so receivers that hang until the timeout, with deliveries queued for them, could occupy
 * every slot of a worker and starve the others. The gate bounds, in this process:
 * - each endpoint to `maxInFlight` attempts at once; an endpoint this process has not seen
 *   answer (or not for ten minutes) gets one (a probe) until it has: a receiver costs one
 *   slot, not `maxInFlight`, before we know how quick it is;
 * - the slow endpoints (their recent attempts take a second or more on average, or one has
 *   been in flight for more than a second) to `maxSlowInFlight` attempts at once between
 *   them all: half the worker's slots by default. However many receivers hang, the other
 *   half stays free for the quick ones. A freed slow slot goes first to the slow endpoint
 *   that has waited longest for one, so a receiver that is slow but answers is not shut out
 *   by ones that never do.
 * A job that finds no slot either
 * - waits here for one: only for an endpoint known to be quick, at most as many jobs as its
 *   cap, and for a second at most; or
 * - is parked: moved to delayed in Redis so that it holds no slot, and put in the endpoint's
 *   line here. A finished attempt hands its slot to a waiter, or else promotes parked jobs
 *   into the room the endpoint has. Parked jobs also wake by themselves later, so a hand-off
 *   lost with a dead process costs time, not deliveries.
 * Not bounded by the slow share: attempts that started before their endpoint was known to be
 * slow. An endpoint counts as slow one second into an attempt, and that attempt ends at the
 * timeout, so a receiver that starts hanging costs the others at most its cap (its probe, if
 * new) for one timeout, once.
 *
 * The bounds are per process: they protect this worker's slots, which is what isolation
 * needs. An endpoint may see up to `maxInFlight` requests from each replica.
 */

/** Parked jobs also wake on their own, after at least and at most this long. */
const MIN_PARK_MS = 1_000;
const MAX_PARK_MS = 60_000;
/**
 * A promoted job normally comes back within milliseconds; one that has not after this long
 * (taken by another replica, or behind a long wait list) no longer holds room in its line.
 */
const PROMOTED_LOST_MS = 1_000;
/** The longest a job waits here for a slot before it parks. */
const MAX_WAIT_MS = 1_000;
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
  /** The jobs waiting here, oldest first; `grant` gives one the slot it was waiting for. */
  waiting: Array<{ deliveryId: string; grant: () => void }>;
  /**
   * Delivery ids parked by this process, oldest first (a Map keeps insertion order), each with
   * its ticket: the line's count of parkings when it first parked. Tickets give a job's place
   * in line without walking the line, which holds the endpoint's whole backlog.
   */
  parked: Map<string, number>;
  nextTicket: number;
  /** Of those, the ones still on their way to delayed: too early to promote. */
  parking: Set<string>;
  /** Promoted while on their way: `parked` promotes them once there. */
  promoteOnceParked: Set<string>;
  /**
   * Jobs promoted into the endpoint's room and not back here yet, with when: the room they
   * were promoted into is theirs. Without counting them, each slot freed while they are on
   * their way would promote more, and the extra ones would only park again.
   */
  promoted: Map<string, number>;
  /** Moving average of the endpoint's attempt durations; undefined until one has finished. */
  attemptMs?: number;
  /**
   * Moving average of how long a slot is held: the attempt with its claim and its record.
   * One turn of the line takes this long, which is what paces the parked jobs' wake-ups.
   */
  slotHeldMs?: number;
  /** When it last had nothing running, waiting or parked here (undefined while it has). */
  idleSince?: number;
}

export interface EndpointGateOptions {
  queue: Queue<DeliveryJobData>;
  logger: Logger;
  maxInFlight: number;
  /** Attempts in flight at once to slow endpoints, all of them together. */
  maxSlowInFlight: number;
  /** How long an attempt holds its slot at most: its lease. Paces the parked jobs' own wake-ups. */
  slotMs: number;
}

function movingAverage(average: number | undefined, sample: number): number {
  return average === undefined ? sample : average * 0.7 + sample * 0.3;
}

export class EndpointGate {
  private readonly lines = new Map<string, EndpointLine>();
  private slowInFlight = 0;
  private lastForgotten = 0;
  /** Slow endpoints whose jobs found every slow slot taken, longest waiting first. */
  private readonly waitingForSlowSlot = new Set<string>();

  constructor(private readonly options: EndpointGateOptions) {}

  private line(endpointId: string): EndpointLine {
    let line = this.lines.get(endpointId);
    if (!line) {
      this.forgetIdleEndpoints();
      line = {
        running: new Map(),
        waiting: [],
        parked: new Map(),
        nextTicket: 0,
        parking: new Set(),
        promoteOnceParked: new Set(),
        promoted: new Map(),
      };
      this.lines.set(endpointId, line);
    }
    line.idleSince = undefined;
    return line;
  }

  /** Drops endpoints idle for FORGET_IDLE_MS: looked at when a new endpoint comes, at most once a minute. */
  private forgetIdleEndpoints(): void {
    const now = Date.now();
    if (now - this.lastForgotten < FORGET_IDLE_MS / 10) return;
    this.lastForgotten = now;
    for (const [endpointId, line] of this.lines) {
      if (line.idleSince !== undefined && now - line.idleSince > FORGET_IDLE_MS) this.lines.delete(endpointId);
    }
  }

  private isSlow(line: EndpointLine): boolean {
    if ((line.attemptMs ?? 0) >= SLOW_ATTEMPT_MS) return true;
    const longAgo = Date.now() - SLOW_ATTEMPT_MS;
    for (const slot of line.running.values()) if (slot.startedAt <= longAgo) return true;
    return false;
  }

  /** The endpoint's own cap: one probe until it has answered once. */
  private capOf(line: EndpointLine): number {
    return line.attemptMs === undefined ? 1 : this.options.maxInFlight;
  }

  /** Takes a slot for the delivery if the endpoint's cap, and the slow share if it is slow, allow. */
  private take(line: EndpointLine, deliveryId: string): boolean {
    if (line.running.size >= this.capOf(line)) return false;
    const slow = this.isSlow(line);
    if (slow && this.slowInFlight >= this.options.maxSlowInFlight) return false;
    if (slow) this.slowInFlight += 1;
    line.running.set(deliveryId, { startedAt: Date.now(), slow });
    return true;
  }

  /**
   * Resolves with 0 once a slot is taken; otherwise with the delivery's place in the parked
   * line, and the caller parks the job and then calls `parked`.
   */
  async acquire(endpointId: string, deliveryId: string): Promise<number> {
    const line = this.line(endpointId);
    line.promoted.delete(deliveryId);
    const known = line.attemptMs !== undefined;
    const full = line.running.size >= this.capOf(line);
    if (known && full && !this.isSlow(line) && line.waiting.length < this.options.maxInFlight) {
      const granted = await new Promise<boolean>((resolve) => {
        const waiter = {
          deliveryId,
          grant: () => {
            clearTimeout(timer);
            resolve(true);
          },
        };
        const timer = setTimeout(() => {
          line.waiting.splice(line.waiting.indexOf(waiter), 1);
          resolve(false);
        }, MAX_WAIT_MS);
        line.waiting.push(waiter);
      });
      if (granted) {
        line.parked.delete(deliveryId);
        return 0;
      }
    }
    if (this.take(line, deliveryId)) {
      line.parked.delete(deliveryId);
      return 0;
    }
    if (this.isSlow(line) && line.running.size < this.capOf(line)) this.waitingForSlowSlot.add(endpointId);
    line.parking.add(deliveryId);
    let ticket = line.parked.get(deliveryId);
    if (ticket === undefined) {
      ticket = line.nextTicket++;
      line.parked.set(deliveryId, ticket);
    }
    // Those ahead, and the gaps left by jobs that got a slot out of turn: at most a little late.
    const firstTicket = line.parked.values().next().value!;
    return ticket - firstTicket + 1;
  }

  /**
   * The job is parked (or failed to be): if a slot was handed to it on its way, when it could
   * not be promoted yet, it is promoted now rather than at its own, distant, wake-up.
   */
  async parked(endpointId: string, deliveryId: string): Promise<void> {
    const line = this.lines.get(endpointId);
    if (!line) return;
    line.parking.delete(deliveryId);
    if (!line.promoteOnceParked.delete(deliveryId)) return;
    try {
      await this.promoteJob(deliveryId);
    } catch (error) {
      this.options.logger.warn({ err: error, endpoint_id: endpointId }, 'could not hand off an endpoint slot');
    }
  }

  /**
   * When a parked job should wake by itself: twice the time its turn should take, judging by
   * how long the endpoint's recent attempts held their slots (or by the longest an attempt can
   * take, for an endpoint not seen yet). Promotion by `release` normally comes first; the
   * wake-up is for a job whose process died with its line, and it never comes as a stampede.
   */
  parkDelayMs(endpointId: string, position: number): number {
    const { maxInFlight, slotMs } = this.options;
    const perTurn = this.lines.get(endpointId)?.slotHeldMs ?? slotMs;
    const expected = Math.ceil(position / maxInFlight) * perTurn;
    return Math.round(Math.min(MAX_PARK_MS, Math.max(MIN_PARK_MS, 2 * expected)) * (1 + 0.1 * Math.random()));
  }

  /**
   * Frees the slot, then fills the endpoint's room: first with the jobs waiting here, then by
   * promoting parked jobs (more than one when the room grew: after a probe answered, or once
   * slow slots are free). A freed slow slot is owed first to the slow endpoint that has waited
   * longest for one. `attemptMs` (when an attempt was made) teaches the gate how quick the
   * endpoint is. Never throws: a lost hand-off costs latency, not deliveries.
   */
  async release(endpointId: string, deliveryId: string, attemptMs?: number): Promise<void> {
    const line = this.line(endpointId);
    const freed = line.running.get(deliveryId);
    line.running.delete(deliveryId);
    if (freed?.slow) this.slowInFlight -= 1;
    if (attemptMs !== undefined && freed) {
      line.attemptMs = movingAverage(line.attemptMs, attemptMs);
      line.slotHeldMs = movingAverage(line.slotHeldMs, Date.now() - freed.startedAt);
    }
    // Synchronous from here to the grants: no newcomer can take a freed slot in between.
    while (line.waiting.length > 0 && this.take(line, line.waiting[0]!.deliveryId)) line.waiting.shift()!.grant();
    const owed = freed?.slow ? this.nextWaitingForSlowSlot(endpointId) : undefined;
    const room = this.roomOf(line, owed ? 1 : 0);
    try {
      if (owed) await this.promote(owed, 1);
      if (room > 0) await this.promote(endpointId, room);
    } catch (error) {
      this.options.logger.warn({ err: error, endpoint_id: endpointId }, 'could not hand off an endpoint slot');
    } finally {
      this.noteIfIdle(line);
    }
  }

  /**
   * How many more attempts the endpoint may start now, counting those waiting here: its cap,
   * and for a slow endpoint the slow share left (less `sharePromised`, already owed elsewhere).
   */
  private roomOf(line: EndpointLine, sharePromised: number): number {
    const own = this.capOf(line) - line.running.size - line.waiting.length - this.onTheirWay(line);
    if (!this.isSlow(line)) return own;
    return Math.min(own, this.options.maxSlowInFlight - this.slowInFlight - sharePromised);
  }

  /** Promoted jobs still on their way back. */
  private onTheirWay(line: EndpointLine): number {
    this.forgetLostPromotions(line);
    // With nothing running here, no release would come to promote again if they were lost.
    if (line.running.size === 0 && line.waiting.length === 0) return 0;
    return line.promoted.size;
  }

  /** Promoted jobs not back after PROMOTED_LOST_MS are taken as lost (oldest first in the Map). */
  private forgetLostPromotions(line: EndpointLine): void {
    const lostBefore = Date.now() - PROMOTED_LOST_MS;
    for (const [deliveryId, promotedAt] of line.promoted) {
      if (promotedAt > lostBefore) return;
      line.promoted.delete(deliveryId);
    }
  }

  /** Another slow endpoint with parked jobs that found every slow slot taken, longest waiting first. */
  private nextWaitingForSlowSlot(releasing: string): string | undefined {
    for (const endpointId of this.waitingForSlowSlot) {
      this.waitingForSlowSlot.delete(endpointId);
      if (endpointId !== releasing && (this.lines.get(endpointId)?.parked.size ?? 0) > 0) return endpointId;
    }
    return undefined;
  }

  /** Promotes up to `count` of the endpoint's parked jobs, oldest first, skipping those gone. */
  private async promote(endpointId: string, count: number): Promise<void> {
    const line = this.lines.get(endpointId);
    if (!line) return;
    let promoted = 0;
    for (const parkedId of line.parked.keys()) {
      if (promoted >= count) return;
      line.parked.delete(parkedId);
      // Counted before the promotion: the job may be back here before the call returns.
      line.promoted.set(parkedId, Date.now());
      if (line.parking.has(parkedId)) {
        line.promoteOnceParked.add(parkedId);
        promoted += 1;
      } else if (await this.promoteJob(parkedId)) {
        promoted += 1;
      } else {
        line.promoted.delete(parkedId);
      }
    }
  }

  private noteIfIdle(line: EndpointLine): void {
    // Promoted jobs on their way do not count: one taken by another replica never comes back,
    // and the line would never be forgotten. One that does come back makes the line busy again.
    const busy = line.running.size + line.waiting.length + line.parked.size + line.parking.size;
    if (busy === 0) line.idleSince = Date.now();
  }

  /** True when the job is on its way to the freed slot; false when it is gone or already running. */
  private async promoteJob(deliveryId: string): Promise<boolean> {
    try {
      // Promoting needs only the job's id: no need to load it first.
      await new Job(this.options.queue, DELIVERY_JOB_NAME, { deliveryId, endpointId: '' }, {}, deliveryId).promote();
      return true;
    } catch (error) {
      const code = (error as { code?: number }).code;
      // Gone (finished elsewhere) or no longer delayed (woke by itself): try the next one.
      if (code === ErrorCode.JobNotExist || code === ErrorCode.JobNotInState) return false;
      throw error;
    }
  }
}
