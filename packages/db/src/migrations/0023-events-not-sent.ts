import type { Knex } from 'knex';

/**
 * Why an event was recorded and never sent: the dispatcher takes the events of a workspace
 * whose payment processor is not `connected` out of the outbox with no delivery (they are
 * recorded, never sent: docs/webhooks.md), and wrote down nothing of it, so a campaign's page
 * could not tell such an event from one no endpoint subscribed to. The dispatcher now writes
 * one narrow row per such event, in the statement that takes it, and the dashboard's campaign
 * timeline says so (docs/dashboard-api.md, "Campaigns").
 *
 * A table of its own, not a column of `events`: setting a column rewrites the event's whole
 * row (what migration 0018 took `dispatched_at` away for). Events not sent before this release
 * have no row: their cause was not recorded.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE events_not_sent (
      event_id uuid PRIMARY KEY REFERENCES events (id) ON DELETE CASCADE,
      reason   text NOT NULL CHECK (reason IN ('processor_not_connected'))
    );
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`DROP TABLE events_not_sent;`);
}
