import type { Db } from '@retention/db';
import { claimBackfill, finishBackfill, renewBackfillLease } from '@retention/domain';
import { runStripeBackfill, type StripeSettings } from '@retention/processors';
import { type Logger, type ThrottledFailures } from '@retention/runtime';
import { postgresFailures } from '../postgres-failures.js';

/**
 * Runs queued backfills, one at a time per worker process and one per workspace overall (a
 * lease in Postgres, renewed while the run lives; a dead worker's run is taken over from its
 * cursor once the lease lapses).
 */
export class BackfillRunner {
  private timer: NodeJS.Timeout | undefined;
  private current: Promise<void> | null = null;
  private stopped = false;
  private readonly abort = new AbortController();
  /** The claim is tried every second: while PostgreSQL is away, a few lines per outage. */
  private readonly failures: ThrottledFailures;

  constructor(
    private readonly options: { db: Db; logger: Logger; stripe: StripeSettings; leaseMs: number; checkEveryMs: number },
  ) {
    this.failures = postgresFailures(options.logger);
  }

  start(): void {
    this.timer = setInterval(() => this.check(), this.options.checkEveryMs);
    this.check();
  }

  private check(): void {
    if (this.current || this.stopped) return;
    this.current = this.runOne().finally(() => {
      this.current = null;
    });
  }

  private async runOne(): Promise<void> {
    const { db, logger, leaseMs } = this.options;
    let connection;
    try {
      connection = await claimBackfill(db, leaseMs);
      this.failures.succeeded('backfill claim');
    } catch (error) {
      this.failures.failed('backfill claim', error, 'backfill claim failed');
      return;
    }
    if (!connection) return;
    logger.info({ connection_id: connection.id, phase: connection.backfill_phase }, 'backfill started');
    const heartbeat = setInterval(
      () => {
        renewBackfillLease(db, connection, leaseMs).then(
          () => this.failures.succeeded('backfill lease'),
          (error: unknown) =>
            this.failures.failed('backfill lease', error, 'backfill lease renewal failed', {
              connection_id: connection.id,
            }),
        );
      },
      Math.max(100, Math.floor(leaseMs / 3)),
    );
    try {
      await runStripeBackfill(db, connection, { ...this.options.stripe, leaseMs, signal: this.abort.signal });
      if (this.abort.signal.aborted) {
        // Stopped between two items: let the next worker take it over at once, from its cursor.
        await renewBackfillLease(db, connection, 0);
      } else {
        logger.info({ connection_id: connection.id }, 'backfill finished');
      }
    } catch (error) {
      logger.warn({ err: error, connection_id: connection.id }, 'backfill failed');
      await finishBackfill(db, connection, error instanceof Error ? error.message : String(error)).catch(
        () => undefined,
      );
    } finally {
      clearInterval(heartbeat);
    }
    this.check();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.abort.abort();
    clearInterval(this.timer);
    await this.current;
  }
}
