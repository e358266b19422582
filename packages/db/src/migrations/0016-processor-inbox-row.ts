import type { Knex } from 'knex';

/**
 * A lighter row for each Stripe event accepted (issue 15's ingestion benchmark; measured in
 * docs/performance.md, "A lighter inbox row"): about 50 µs of Postgres a row before, 34 after.
 *
 * - `payload` is `json`, not `jsonb`: the event's text is checked as JSON and kept exactly as
 *   Stripe signed it, with no conversion to jsonb's binary form on the way in (a quarter of a
 *   row's cost). Nothing queries inside it; the applier reads it whole. It also takes the
 *   `\u0000` escape that jsonb refuses, so such an event is stored and applied (the domain
 *   drops the control character) rather than refused with a 500 until Stripe gives up on it.
 * - One foreign key, (connection_id, workspace_id) to the connection, in place of one to the
 *   connection and one to the workspace: one check a row instead of two, and the event's
 *   workspace is now bound to be its connection's. Deleting a workspace still deletes its
 *   events, through its connection.
 *
 * The type change rewrites the table under an exclusive lock on both tables (connections
 * too: the API's look-ups of a connection wait with the inbox's inserts): on a large inbox, run
 * it when the API can wait (Stripe retries what is not answered). Both are locked first, the
 * inbox before the connections, the order an insert takes them in (its row, then the foreign
 * key's check), so a live insert waits rather than deadlocks with the migration.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    LOCK TABLE processor_events, processor_connections IN ACCESS EXCLUSIVE MODE;
    ALTER TABLE processor_connections
      ADD CONSTRAINT processor_connections_id_workspace_key UNIQUE (id, workspace_id);
    ALTER TABLE processor_events
      DROP CONSTRAINT processor_events_payload_check,
      DROP CONSTRAINT processor_events_connection_id_fkey,
      DROP CONSTRAINT processor_events_workspace_id_fkey;
    ALTER TABLE processor_events
      ALTER COLUMN payload TYPE json USING payload::json,
      ADD CONSTRAINT processor_events_payload_check CHECK (json_typeof(payload) = 'object'),
      ADD CONSTRAINT processor_events_connection_fkey FOREIGN KEY (connection_id, workspace_id)
        REFERENCES processor_connections (id, workspace_id) ON DELETE CASCADE;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('LOCK TABLE processor_events, processor_connections IN ACCESS EXCLUSIVE MODE');
  // jsonb refuses the \u0000 escape json takes: such an event cannot go back as it is.
  const { rows } = await knex.raw<{ rows: Array<{ count: number }> }>(
    "SELECT count(*)::int AS count FROM processor_events WHERE strpos(payload::text, '\\u0000') > 0",
  );
  if (rows[0]!.count > 0) {
    throw new Error(
      `0016-processor-inbox-row cannot be undone: ${rows[0]!.count} stored Stripe event(s) hold a \\u0000 escape, which jsonb refuses; delete or edit them first`,
    );
  }
  await knex.raw(`
    ALTER TABLE processor_events
      DROP CONSTRAINT processor_events_payload_check,
      DROP CONSTRAINT processor_events_connection_fkey;
    ALTER TABLE processor_events
      ALTER COLUMN payload TYPE jsonb USING payload::jsonb,
      ADD CONSTRAINT processor_events_payload_check CHECK (jsonb_typeof(payload) = 'object'),
      ADD CONSTRAINT processor_events_connection_id_fkey FOREIGN KEY (connection_id)
        REFERENCES processor_connections (id) ON DELETE CASCADE,
      ADD CONSTRAINT processor_events_workspace_id_fkey FOREIGN KEY (workspace_id)
        REFERENCES workspaces (id) ON DELETE CASCADE;
    ALTER TABLE processor_connections DROP CONSTRAINT processor_connections_id_workspace_key;
  `);
}
