import type { Transaction } from '@retention/db';
import type { Db } from '@retention/db';
import {
  applyProcessorEvents,
  type AppliedProcessorEvent,
  type ApplyOutcome,
  type ClaimedProcessorEvent,
} from '@retention/domain';
import type { Logger } from '@retention/runtime';

/**
 * Applies the processor's stored events (the inbox, docs/processor.md). The queue is Postgres
 * itself: each loop claims the oldest due events with FOR UPDATE SKIP LOCKED, applies each and
 * marks it applied in one transaction (see applyProcessorEvents). So a worker killed mid-apply leaves the event pending
 * (its lock dies with its connection) and the next claim applies it once; an emptied Redis
 * loses nothing because nothing about these events lives there. Woken by NOTIFY from the API,
 * with a poll as the safety net (and for back-off retries coming due).
 */
export class ProcessorEventApplier {
  private running = false;
  private loops: Promise<void>[] = [];
  private wakers = new Set<() => void>();
  private poll: NodeJS.Timeout | undefined;

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
  ) {}

  start(): void {
    this.running = true;
    this.poll = setInterval(() => this.wake(), this.options.pollMs);
    for (let index = 0; index < this.options.concurrency; index += 1) this.loops.push(this.loop());
  }

  wake(): void {
    for (const waker of this.wakers) waker();
  }

  private async loop(): Promise<void> {
    while (this.running) {
      let results: AppliedProcessorEvent[];
      try {
        results = await applyProcessorEvents(this.options.db, this.options.apply, {
          batchSize: this.options.batchSize,
        });
      } catch (error) {
        this.options.logger.warn({ err: error }, 'processor events batch failed; retrying at the next poll');
        results = [];
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
      if (results.length === 0 && this.running) await this.sleep();
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
    this.wake();
    await Promise.all(this.loops);
  }
}
