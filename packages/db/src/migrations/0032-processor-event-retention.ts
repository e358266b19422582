import type { Knex } from 'knex';

/**
 * Retention of the Stripe event inbox (docs/processor.md, "Retention"): the worker deletes
 * events applied or ignored more than PROCESSOR_EVENT_RETENTION_DAYS ago. What `processor
 * status` counts must not go backwards when it does, so each deleting statement adds what it
 * deleted to its connection's row: how many events, and how many of them were set aside, by
 * reason. `events_received` is then this count plus the rows still there, read in one statement
 * (one snapshot: a delete and its count commit together). Nothing is written per accepted
 * event: the hot path stays one INSERT (docs/processor.md, "Accepted").
 *
 * New columns with a constant default: no rewrite of the table, a moment's lock. Every batch
 * finds its rows through processor_events_received_idx (connection, received time), so no
 * index is added.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE processor_connections
      ADD COLUMN pruned_events bigint NOT NULL DEFAULT 0 CHECK (pruned_events >= 0),
      ADD COLUMN pruned_connected_account bigint NOT NULL DEFAULT 0 CHECK (pruned_connected_account >= 0),
      ADD COLUMN pruned_other_mode bigint NOT NULL DEFAULT 0 CHECK (pruned_other_mode >= 0),
      ADD COLUMN pruned_signup_payment bigint NOT NULL DEFAULT 0 CHECK (pruned_signup_payment >= 0);
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE processor_connections
      DROP COLUMN pruned_events,
      DROP COLUMN pruned_connected_account,
      DROP COLUMN pruned_other_mode,
      DROP COLUMN pruned_signup_payment;
  `);
}
