import type { Knex } from 'knex';

/**
 * What `processor status` and the Settings, Processor page say beyond counts
 * (docs/processor.md):
 * - while an import (backfill) waits out Stripe's 429s, until when; before, a run that waited
 *   looked stuck. Null when the run is not waiting;
 * - the latest error of the events waiting for a retry or parked, read per connection newest
 *   first: the partial index holds only those events, so the read costs nothing however many
 *   events a connection has applied.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    -- A long transaction on the table fails the migration at once (run it again) rather than
    -- queueing every reader and writer behind its lock (docs/upgrading.md).
    SET LOCAL lock_timeout = '10s';
    ALTER TABLE processor_connections ADD COLUMN backfill_waiting_until timestamptz(3);
    CREATE INDEX processor_events_failing_idx ON processor_events (connection_id, received_at DESC)
      WHERE state IN ('pending', 'parked') AND last_error IS NOT NULL;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    DROP INDEX processor_events_failing_idx;
    ALTER TABLE processor_connections DROP COLUMN backfill_waiting_until;
  `);
}
