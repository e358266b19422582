import type { Knex } from 'knex';

/**
 * Postgres is the webhook deliveries' backlog; Redis holds only the jobs an endpoint may run
 * now (docs/delivery-scheduler.md). `queued_at` marks a pending delivery whose job has been
 * released to Redis (and when: it is part of the job's id); a pending delivery without it
 * waits here until it is due and its endpoint has room.
 *
 * - `event_seq`, the event's place in the outbox, orders deliveries that fell due at the same
 *   instant (a dispatch batch shares its transaction's now()): oldest first means the events'
 *   order, not the random order of the deliveries' ids. Null for Send test's pings;
 *   deliveries made before this migration order by id among equals, as before;
 * - the backlog index gives an endpoint's oldest due deliveries, and the endpoints that have
 *   a backlog, by a skip scan;
 * - the queued index counts an endpoint's released deliveries (a handful: its in-flight cap)
 *   and lets the sweeper find released deliveries whose job Redis lost;
 * - the old due index (every pending delivery by next_attempt_at) served the sweeper's walk of
 *   every overdue delivery, which no longer happens.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE webhook_deliveries
      ADD COLUMN queued_at timestamptz(3),
      ADD COLUMN event_seq bigint,
      ADD CONSTRAINT webhook_deliveries_queued_only_pending CHECK (status = 'pending' OR queued_at IS NULL);
    CREATE INDEX webhook_deliveries_backlog_idx ON webhook_deliveries (endpoint_id, next_attempt_at, event_seq, id)
      WHERE status = 'pending' AND queued_at IS NULL;
    CREATE INDEX webhook_deliveries_queued_idx ON webhook_deliveries (endpoint_id, queued_at)
      WHERE status = 'pending' AND queued_at IS NOT NULL;
    DROP INDEX webhook_deliveries_due_idx;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE INDEX webhook_deliveries_due_idx ON webhook_deliveries (next_attempt_at) WHERE status = 'pending';
    DROP INDEX webhook_deliveries_queued_idx;
    DROP INDEX webhook_deliveries_backlog_idx;
    ALTER TABLE webhook_deliveries
      DROP CONSTRAINT webhook_deliveries_queued_only_pending, DROP COLUMN queued_at, DROP COLUMN event_seq;
  `);
}
