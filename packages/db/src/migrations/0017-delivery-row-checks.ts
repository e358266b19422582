import type { Knex } from 'knex';

/**
 * One foreign-key check fewer for every delivery the dispatcher inserts (issue 16 part 3's
 * first seconds: a burst of events is a burst of delivery rows; measured in
 * docs/performance.md, "One check fewer per delivery row"). A delivery's workspace was
 * checked twice: by its own key to `workspaces`, and by (workspace_id, endpoint_id) to its
 * endpoint, whose own key to `workspaces` already holds the workspace to exist. The first adds
 * nothing, so it goes. Deleting a workspace still deletes its deliveries, through its
 * endpoints (both keys cascade).
 *
 * Dropping a constraint takes an exclusive lock on both tables for a moment, and rewrites
 * nothing.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE webhook_deliveries DROP CONSTRAINT webhook_deliveries_workspace_id_fkey');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE webhook_deliveries
      ADD CONSTRAINT webhook_deliveries_workspace_id_fkey FOREIGN KEY (workspace_id)
        REFERENCES workspaces (id) ON DELETE CASCADE
  `);
}
