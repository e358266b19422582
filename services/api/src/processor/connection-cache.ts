import type { Config } from '@retention/core';
import type { Db } from '@retention/db';
import { connectionForReceive, type ConnectionRow } from '@retention/domain';
import { TtlCache } from '@retention/runtime';

type Found = { connection: ConnectionRow; webhookSecret: string } | null;

/**
 * The receive route's view of a connection (its row and opened signing secret), kept for one
 * second per connection id. Under a burst from Stripe every request would otherwise read the
 * same row and open the same sealed secret; with this, one read a second does. The cost: a
 * disconnect, a reconnect with a new secret or a first event's `pending → connected` reaches
 * each API process up to a second late (an event in that second is verified against the
 * secret the process last read, and stored as it would have been a second earlier).
 * Unknown ids are kept too (as null), so a flood of made-up URLs costs a read a second per id;
 * the cache is bounded, its oldest entry dropped when full.
 */
export class ConnectionCache {
  private readonly entries: TtlCache<Found>;

  constructor(
    private readonly load: (connectionId: string) => Promise<Found>,
    private readonly options: { ttlMs: number; maxEntries: number; now?: () => number } = {
      ttlMs: 1_000,
      maxEntries: 10_000,
    },
  ) {
    this.entries = new TtlCache(options.maxEntries);
  }

  static forStripe(db: Db, config: Config): ConnectionCache {
    return new ConnectionCache((id) => connectionForReceive(db, config.secretsKey, 'stripe', id));
  }

  async get(connectionId: string): Promise<Found> {
    const now = (this.options.now ?? Date.now)();
    const kept = this.entries.get(connectionId, now);
    if (kept !== undefined) return kept;
    const found = await this.load(connectionId);
    this.entries.set(connectionId, found, this.options.ttlMs, now);
    return found;
  }
}
