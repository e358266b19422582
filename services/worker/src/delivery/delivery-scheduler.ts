import { type Logger, type ThrottledFailures } from '@retention/runtime';
import { postgresFailures } from '../postgres-failures.js';

/**
 * Postgres is the backlog; Redis holds only ready work (docs/delivery-scheduler.md). A
 * delivery is released, that is marked queued in Postgres and given a job in Redis, only when
 * it is due and its endpoint has room: at most as many of an endpoint's deliveries are queued
 * at once as it may run now. The scheduler decides when to release, for which endpoints; the
 * port does it, atomically per delivery, in Postgres, then in Redis.
 *
 * Releases are asked for by
 * - the dispatcher, for the endpoints of the deliveries it just made;
 * - a finished or refused attempt, for the endpoints whose room it freed (`wake`);
 * - its own clock: every `pollMs` it asks what is due (retries, deliveries resent or recovered
 *   by another process, anything another replica left), and it wakes exactly when a retry
 *   this process recorded falls due (`wakeAt`).
 * One release runs at a time; wakes that come meanwhile are merged into the next one.
 */

/** A delivery marked queued: its job's id is made of both (see queues.ts). */
export interface ReleasedDelivery {
  deliveryId: string;
  endpointId: string;
  queuedAt: Date;
}

/** How many of the endpoint's deliveries may be queued at once now, counting those already queued. */
export interface EndpointAllowance {
  endpointId: string;
  allowance: number;
}

/** The scheduler's view of Postgres and Redis: narrow, so that it is tested in memory. */
export interface SchedulerPort {
  /**
   * Marks queued, for each endpoint, its oldest due deliveries (oldest `next_attempt_at` first,
   * none whose attempt is in flight), as many as its allowance less those already queued,
   * not counting `notCounted` (queued, but not in flight: their result is being recorded, or
   * they are a job's spares).
   */
  release(allowances: readonly EndpointAllowance[], notCounted: readonly string[]): Promise<ReleasedDelivery[]>;
  /** Gives the released deliveries their jobs in Redis. */
  enqueue(released: readonly ReleasedDelivery[]): Promise<void>;
  /** The endpoints with deliveries waiting in the backlog, each with when its oldest is due. */
  backlog(): Promise<Array<{ endpointId: string; dueAt: Date }>>;
}

export interface SchedulerClock {
  now(): number;
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

const SYSTEM_CLOCK: SchedulerClock = {
  now: () => Date.now(),
  setTimeout: (callback, ms) => setTimeout(callback, ms).unref(),
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

export interface DeliverySchedulerOptions {
  port: SchedulerPort;
  /** What each endpoint may have queued now: the endpoint gate's view of its room. */
  allowances(endpointIds: readonly string[]): EndpointAllowance[];
  /**
   * Queued deliveries not in flight, which take no room: their request has ended and their
   * result is being recorded, or a job has claimed them ahead (spares).
   */
  notInFlight(): readonly string[];
  logger: Logger;
  /** The longest between two looks at what is due. */
  pollMs: number;
  clock?: SchedulerClock;
}

export class DeliveryScheduler {
  private readonly clock: SchedulerClock;
  /** Endpoints to release for at the next round. */
  private readonly woken = new Set<string>();
  private releasing: Promise<void> | null = null;
  private scanning: Promise<void> | null = null;
  /** The timer fired during a scan: look again when it ends. */
  private scanAgain = false;
  private timer: unknown;
  private timerAt = Infinity;
  private stopped = true;
  /** Both look every poll: while PostgreSQL is away, a few lines per outage, not one a second. */
  private readonly failures: ThrottledFailures;

  constructor(private readonly options: DeliverySchedulerOptions) {
    this.clock = options.clock ?? SYSTEM_CLOCK;
    this.failures = postgresFailures(options.logger);
  }

  /** Looks at what is due now, and from then on at least every `pollMs`. */
  start(): void {
    this.stopped = false;
    this.scan();
  }

  /** No more releases; waits for the one running. Jobs already in Redis stay for the next worker. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
    this.timer = undefined;
    await Promise.all([this.releasing, this.scanning]);
  }

  /** False once stopped: a job then goes on with no further delivery. */
  isRunning(): boolean {
    return !this.stopped;
  }

  /** These endpoints may have room: release their due deliveries soon (merged with other wakes). */
  wake(endpointIds: Iterable<string>): void {
    for (const endpointId of endpointIds) this.woken.add(endpointId);
    this.releaseWoken();
  }

  /** Something falls due at `at` (a retry this process recorded): look then, not at the next poll. */
  wakeAt(at: number): void {
    this.schedule(Math.max(at, this.clock.now()));
  }

  /** Resolves once no release or scan is running (tests). */
  async idle(): Promise<void> {
    while (this.releasing || this.scanning) await Promise.all([this.releasing, this.scanning]);
  }

  private releaseWoken(): void {
    if (this.releasing || this.stopped || this.woken.size === 0) return;
    this.releasing = this.releaseRounds().finally(() => {
      this.releasing = null;
      this.releaseWoken();
    });
  }

  private async releaseRounds(): Promise<void> {
    while (this.woken.size > 0 && !this.stopped) {
      const endpointIds = [...this.woken];
      this.woken.clear();
      const allowances = this.options.allowances(endpointIds).filter(({ allowance }) => allowance > 0);
      if (allowances.length === 0) continue;
      try {
        const released = await this.options.port.release(allowances, this.options.notInFlight());
        // Marked queued without a job if this fails: the sweeper gives them one.
        if (released.length > 0) await this.options.port.enqueue(released);
        this.failures.succeeded('delivery release');
      } catch (error) {
        // The next look at what is due releases them.
        this.failures.failed('delivery release', error, 'could not release deliveries', {
          endpoints: allowances.length,
        });
      }
    }
  }

  private schedule(at: number): void {
    if (this.stopped || at >= this.timerAt) return;
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
    this.timerAt = at;
    this.timer = this.clock.setTimeout(
      () => {
        this.timer = undefined;
        this.timerAt = Infinity;
        this.scan();
      },
      Math.max(0, at - this.clock.now()),
    );
  }

  /** Wakes the endpoints whose backlog is due; sets the timer for the next one due, or the poll. */
  private scan(): void {
    if (this.stopped) return;
    if (this.scanning) {
      this.scanAgain = true;
      return;
    }
    this.scanAgain = false;
    this.scanning = (async () => {
      const now = this.clock.now();
      let next = now + this.options.pollMs;
      try {
        const due: string[] = [];
        for (const { endpointId, dueAt } of await this.options.port.backlog()) {
          if (dueAt.getTime() <= now) due.push(endpointId);
          else next = Math.min(next, dueAt.getTime());
        }
        this.wake(due);
        this.failures.succeeded('delivery backlog');
      } catch (error) {
        this.failures.failed('delivery backlog', error, 'could not read the delivery backlog');
      }
      return next;
    })().then((next) => {
      this.scanning = null;
      if (this.scanAgain) this.scan();
      else this.schedule(next);
    });
  }
}
