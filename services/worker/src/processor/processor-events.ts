import type { Transaction } from '@retention/db';
import type { Db } from '@retention/db';
import {
  applyProcessorEvents,
  type AppliedProcessorEvent,
  type ApplyOutcome,
  type ClaimedProcessorEvent,
} from '@retention/domain';
import { type Logger, type ThrottledFailures } from '@retention/runtime';
import { postgresFailures } from '../postgres-failures.js';

/**
 * Applies the processor's stored events (the inbox, docs/processor.md). The queue is Postgres
 * itself: each loop claims the oldest due events with FOR UPDATE SKIP LOCKED, applies each and
 * marks it applied in one transaction (see applyProcessorEvents). So a worker killed mid-apply leaves the event pending
 * (its lock dies with its connection) and the next claim applies it once; an emptied Redis
 * loses nothing because nothing about these events lives there. Woken by NOTIFY from the API,
 * with a poll as the safety net (and for back-off retries coming due).
 */
const SOURCE = 'processor events';

export class ProcessorEventApplier {
  private running = false;
  private loops: Promise<void>[] = [];
  private wakers = new Set<() => void>();
  private poll: NodeJS.Timeout | undefined;
  /** The batch each loop is applying, by connection id. */
  private applying = new Map<string, { notified: boolean }>();
  private missedWake = false;
  /** Every loop fails each round while PostgreSQL is away: a few lines per outage, not several a second. */
  private readonly failures: ThrottledFailures;

  constructor(
    private readonly options: {
      db: Db;
      apply: (trx: Transaction, event: ClaimedProcessorEvent) => Promise<ApplyOutcome>;
      logger: Logger;
      /** Batches applied at once by this process; ordering per object is kept by row locks. */
      concurrency: number;
      /** Events of one connection claimed, applied and committed together. */
      batchSize: number;
      pollMs: number;
    },
  ) {
    this.failures = postgresFailures(options.logger);
  }

  start(): void {
    this.running = true;
    this.poll = setInterval(() => this.wakeAll(), this.options.pollMs);
    for (let index = 0; index < this.options.concurrency; index += 1) this.loops.push(this.loop());
  }

  /**
   * An event was stored (`connectionId`: its connection, from the NOTIFY's payload). A loop of
   * this process already applying that connection takes it in its next round (it goes on
   * without sleeping once told), so no other loop is woken to find the connection busy: under
   * a steady stream for one connection that was several wasted queries per stored batch. Any
   * other event wakes one sleeping loop; with none asleep, the next loop to finish does not sleep.
   */
  wake(connectionId?: string): void {
    const busy = connectionId ? this.applying.get(connectionId) : undefined;
    if (busy) {
      busy.notified = true;
      return;
    }
    const sleeper = this.wakers.values().next();
    if (sleeper.done) this.missedWake = true;
    else sleeper.value();
  }

  /** The poll (and stop): every sleeping loop looks, which also brings back-off retries due. */
  private wakeAll(): void {
    for (const waker of this.wakers) waker();
  }

  private async loop(): Promise<void> {
    while (this.running) {
      let results: AppliedProcessorEvent[];
      const batch = { connectionId: undefined as string | undefined, notified: false };
      try {
        results = await applyProcessorEvents(this.options.db, this.options.apply, {
          batchSize: this.options.batchSize,
          onLocked: (connectionId) => {
            batch.connectionId = connectionId;
            this.applying.set(connectionId, batch);
          },
        });
        this.failures.succeeded(SOURCE);
      } catch (error) {
        this.failures.failed(SOURCE, error, 'processor events batch failed; retrying at the next poll');
        results = [];
      } finally {
        if (batch.connectionId !== undefined) this.applying.delete(batch.connectionId);
      }
      for (const result of results) {
        if (result.error === undefined) continue;
        this.options.logger.warn(
          {
            err: result.error,
            processor_event_id: result.event.id,
            psp_event_id: result.event.psp_event_id,
            outcome: result.outcome,
          },
          result.outcome === 'parked' ? 'processor event parked' : 'processor event failed; will retry',
        );
      }
      if (results.length > 0 || batch.notified || !this.running) continue;
      if (this.missedWake) {
        this.missedWake = false;
        continue;
      }
      await this.sleep();
    }
  }

  private sleep(): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        this.wakers.delete(done);
        resolve();
      };
      this.wakers.add(done);
    });
  }

  /** Lets the events being applied finish, then stops. */
  async stop(): Promise<void> {
    this.running = false;
    clearInterval(this.poll);
    this.wakeAll();
    await Promise.all(this.loops);
  }
}
