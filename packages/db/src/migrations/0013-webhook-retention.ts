import type { Knex } from 'knex';

/**
 * Indexes for the webhook log's retention job (packages/domain/src/webhooks/retention.ts):
 * it deletes the oldest attempts and finished deliveries in small batches, and each batch must
 * find its rows without scanning the table.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE INDEX webhook_attempts_attempted_at_idx ON webhook_attempts (attempted_at);
    CREATE INDEX webhook_deliveries_completed_at_idx ON webhook_deliveries (completed_at)
      WHERE completed_at IS NOT NULL;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX webhook_attempts_attempted_at_idx; DROP INDEX webhook_deliveries_completed_at_idx;');
}
