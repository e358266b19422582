import { withoutStatement, type Db } from '@retention/db';
import { recordRefusedDeliveries } from '@retention/domain';
import type { Logger } from '@retention/runtime';

/**
 * Counts deliveries refused for their signature (docs/processor.md, "Refused deliveries"), best
 * effort and never in the way of the answer: the 400 is the contract, the count only a hint
 * for the Processor page, so the receiver answers without waiting for it. Awaiting it made an
 * unreachable or slow PostgreSQL, or the counter row locked, turn the documented 400 into a
 * 500 or a request hanging on the lock.
 *
 * Refusals are added up per connection in memory and written by one statement at a time: the
 * first goes out at once, those that arrive while it runs go together in the next. A burst of
 * refusals (a wrong secret and Stripe retrying a backlog) all update their connection's one
 * row, so this turns a queue of requests waiting on that row's lock into one UPDATE, and what
 * waits in memory is a number per connection, however long the database takes. A statement
 * that fails loses the refusals it carried (logged with how many; not retried, since a
 * database refusing one count would refuse the next the same way, and the next refusal counts
 * again). `close()` waits for what is held, so a normal shutdown loses none.
 */
export class RefusalCounter {
  private pending = new Map<string, number>();
  private writing: Promise<void> | null = null;

  constructor(
    private readonly db: Db,
    private readonly logger: Logger,
  ) {}

  /** Counts one refusal on `connectionId`, to be written soon; returns at once. */
  count(connectionId: string): void {
    this.pending.set(connectionId, (this.pending.get(connectionId) ?? 0) + 1);
    this.writing ??= this.writeAll();
  }

  /** Settles once every refusal counted so far is written (or given up). */
  async close(): Promise<void> {
    await this.writing;
  }

  private async writeAll(): Promise<void> {
    // The refusals of this turn of the event loop go in the first statement, not one each.
    await new Promise((resolve) => setImmediate(resolve));
    while (this.pending.size > 0) {
      const counts = this.pending;
      this.pending = new Map();
      try {
        await recordRefusedDeliveries(this.db, counts);
      } catch (error) {
        // Neither the connection ids (they are the webhook URLs, a credential) nor the statement.
        const refused = [...counts.values()].reduce((sum, n) => sum + n, 0);
        this.logger.warn({ refused, err: withoutStatement(error) }, 'refused deliveries not counted');
      }
    }
    this.writing = null;
  }
}
