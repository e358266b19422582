import type { Knex } from 'knex';

/**
 * Deliveries refused for a bad or stale signature, counted per connection (docs/processor.md,
 * "Refused deliveries"): a connection whose signing secret was mistyped kept reading "Connected
 * and syncing" while Stripe's every delivery was answered 400. A refused delivery stores nothing
 * (processor.md): this is a counter, one row per connection, never its body nor its signature.
 * Cleared when the signing secret is set again (a connect), so it counts against the secret in use.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE processor_refused_deliveries (
      connection_id uuid PRIMARY KEY REFERENCES processor_connections (id) ON DELETE CASCADE,
      refused       integer NOT NULL CHECK (refused > 0),
      first_at      timestamptz(3) NOT NULL,
      last_at       timestamptz(3) NOT NULL,
      CHECK (last_at >= first_at)
    );
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TABLE processor_refused_deliveries');
}
