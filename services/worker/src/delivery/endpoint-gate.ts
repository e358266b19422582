import { ErrorCode, Job, type Queue } from 'bullmq';
import type { Logger } from '@retention/runtime';
import { DELIVERY_JOB_NAME, type DeliveryJobData } from '../queues.js';

/**
 * Per-endpoint isolation. BullMQ (open source) has one concurrency for a whole queue, so an
 * endpoint that hangs until the timeout, with thousands of deliveries queued, could occupy
 * every slot of a worker and starve the other endpoints. The gate caps the attempts in flight
 * per endpoint in this process. A job that finds its endpoint full either
 * - waits here for a slot: only for an endpoint whose attempts are quick, only as many jobs
 *   as the cap, and for a second at most; or
 * - is parked: moved to delayed in Redis so that it holds no slot, and put in the endpoint's
 *   line here. Each finished attempt hands its slot to a waiter, or else promotes the oldest
 *   parked job. Parked jobs also wake by themselves later, so a hand-off lost with a dead
 *   process costs time, not deliveries.
 * A hanging endpoint therefore holds at most `maxInFlight` slots (plus as many waiters for
 * at most a second, before its slowness is known), whatever its backlog.
 *
 * The cap is per process: it protects this worker's slots, which is what isolation needs.
 * An endpoint may see up to `maxInFlight` requests from each replica.
 */

/** Parked jobs also wake on their own, after at least and at most this long. */
const MIN_PARK_MS = 1_000;
const MAX_PARK_MS = 60_000;
/** The longest a job waits here for a slot before it parks. */
const MAX_WAIT_MS = 1_000;
/** An endpoint whose attempts take longer than this on average gets no waiters: its jobs park. */
const SLOW_ATTEMPT_MS = 1_000;

interface EndpointLine {
  running: Set<string>;
  /** The jobs waiting here, oldest first; `grant` gives one the slot it was waiting for. */
  waiting: Array<{ deliveryId: string; grant: () => void }>;
  /** Delivery ids parked by this process, oldest first (a Set keeps insertion order). */
  parked: Set<string>;
  /** Moving average of the endpoint's attempt durations. */
  attemptMs?: number;
}

export interface EndpointGateOptions {
  queue: Queue<DeliveryJobData>;
  logger: Logger;
  maxInFlight: number;
  /** How long an attempt holds its slot at most: its lease. Paces the parked jobs' own wake-ups. */
  slotMs: number;
}

export class EndpointGate {
  private readonly lines = new Map<string, EndpointLine>();

  constructor(private readonly options: EndpointGateOptions) {}

  private line(endpointId: string): EndpointLine {
    let line = this.lines.get(endpointId);
    if (!line) {
      line = { running: new Set(), waiting: [], parked: new Set() };
      this.lines.set(endpointId, line);
    }
    return line;
  }

  /** Resolves with 0 once a slot is taken; otherwise with the delivery's place in the parked line. */
  async acquire(endpointId: string, deliveryId: string): Promise<number> {
    const line = this.line(endpointId);
    const { maxInFlight } = this.options;
    const patient = (line.attemptMs ?? 0) < SLOW_ATTEMPT_MS;
    if (line.running.size >= maxInFlight && patient && line.waiting.length < maxInFlight) {
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
    if (line.running.size < maxInFlight) {
      line.running.add(deliveryId);
      line.parked.delete(deliveryId);
      return 0;
    }
    if (!line.parked.has(deliveryId)) {
      line.parked.add(deliveryId);
      return line.parked.size;
    }
    return [...line.parked].indexOf(deliveryId) + 1;
  }

  /**
   * When a parked job should wake by itself: twice the time its turn should take, judging by
   * the endpoint's recent attempts (or by the longest an attempt can take, for an endpoint not
   * seen yet). Promotion by `release` normally comes first; the wake-up is for a job whose
   * process died with its line, and it never comes as a stampede.
   */
  parkDelayMs(endpointId: string, position: number): number {
    const { maxInFlight, slotMs } = this.options;
    const perTurn = this.lines.get(endpointId)?.attemptMs ?? slotMs;
    const expected = Math.ceil(position / maxInFlight) * perTurn;
    return Math.round(Math.min(MAX_PARK_MS, Math.max(MIN_PARK_MS, 2 * expected)) * (1 + 0.1 * Math.random()));
  }

  /**
   * Frees the slot: to a job waiting here if there is one, else to the oldest parked job.
   * `attemptMs` (when an attempt was made) teaches the gate how quick the endpoint is.
   * Never throws: a lost hand-off costs latency, not deliveries.
   */
  async release(endpointId: string, deliveryId: string, attemptMs?: number): Promise<void> {
    const line = this.line(endpointId);
    line.running.delete(deliveryId);
    if (attemptMs !== undefined) {
      line.attemptMs = line.attemptMs === undefined ? attemptMs : line.attemptMs * 0.7 + attemptMs * 0.3;
    }
    const waiter = line.waiting.shift();
    if (waiter) {
      // The slot passes straight to the waiter: no newcomer can take it in between.
      line.running.add(waiter.deliveryId);
      return waiter.grant();
    }
    try {
      for (const parkedId of line.parked) {
        line.parked.delete(parkedId);
        if (await this.promote(parkedId)) break;
      }
    } catch (error) {
      this.options.logger.warn({ err: error, endpoint_id: endpointId }, 'could not hand off an endpoint slot');
    } finally {
      if (line.running.size === 0 && line.waiting.length === 0 && line.parked.size === 0) {
        // Forget idle endpoints, but keep what was learnt about a slow one.
        if ((line.attemptMs ?? 0) < SLOW_ATTEMPT_MS) this.lines.delete(endpointId);
      }
    }
  }

  /** True when the job is on its way to the freed slot; false when it is gone or already running. */
  private async promote(deliveryId: string): Promise<boolean> {
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
