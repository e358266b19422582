import type { Knex } from 'knex';

/**
 * A cancel session's timeline (docs/dashboard-api.md, "Data pages"): the events about it
 * (`cancel.saved`, `cancel.lost`, whose data carry `session_id`), in order, without reading the
 * workspace's other events, as events_campaign_idx (migration 0012) does for a campaign's.
 * Partial: only the events that name a session are in it. The timeline's condition,
 * `data ->> 'session_id' = $1`, implies the index's predicate (`=` is strict), so the planner uses it.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE INDEX events_session_idx ON events (workspace_id, (data ->> 'session_id'), seq)
      WHERE (data ->> 'session_id') IS NOT NULL;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`DROP INDEX events_session_idx;`);
}
