import type { Knex } from 'knex';

/**
 * The security log's filters (docs/dashboard-api.md, "Security log"; measured in
 * docs/performance.md, "Security log filters", on two workspaces of 200,000 entries each). Without them
 * an action or a person with few entries, or none, is a scan of the whole table (35 ms there, and
 * growing with every workspace's log), and an actor kind with none walks the workspace's whole
 * list index:
 * - security_events_action_idx: the log's (workspace_id, action, time DESC, id DESC), as the data
 *   pages' filter indexes (0014), so one action's keyset page after any cursor is one range read;
 * - security_events_actor_user_idx: a person's entries, led by the user's id (a user is of one
 *   workspace): the same index serves the foreign key's ON DELETE SET NULL when someone is removed
 *   from a team, which read every workspace's log before. Partial: the entries of no user (the
 *   operator CLI without --actor, the service, the processor, the removed) are not in it;
 * - security_events_actor_kind_idx: the entries of the operator CLI, the processor and the
 *   service. Partial: a person's entries in the dashboard (`user`, nearly all of a log) are not in
 *   it, and `actor_type = 'operator'` implies its predicate, so the planner uses it.
 */
export async function up(knex: Knex): Promise<void> {
  // Building an index holds writes to the log (every audited change, a removal's SET NULL) for
  // its duration (about 1 s for 400,000 entries: docs/upgrading.md); the wait for the lock behind
  // a long transaction is bounded too, rather than queueing every audited change behind it.
  await knex.raw(`
    SET LOCAL lock_timeout = '10s';
    CREATE INDEX security_events_action_idx ON security_events (workspace_id, action, created_at DESC, id DESC);
    CREATE INDEX security_events_actor_user_idx ON security_events (actor_user_id, created_at DESC, id DESC)
      WHERE actor_user_id IS NOT NULL;
    CREATE INDEX security_events_actor_kind_idx ON security_events (workspace_id, actor_type, created_at DESC, id DESC)
      WHERE actor_type <> 'user';
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    DROP INDEX security_events_action_idx;
    DROP INDEX security_events_actor_user_idx;
    DROP INDEX security_events_actor_kind_idx;
  `);
}
