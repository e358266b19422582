import type { Knex } from 'knex';

/**
 * The security log (docs/dashboard-api.md, "Security log"): who changed a token, an endpoint
 * or its secret, the team, the workspace or the processor connection, from where and when.
 * Each row is written in the same transaction as the change it records. The lists below are
 * written out here rather than derived from core's enums: a migration is a snapshot of the
 * schema on the day it was written.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE security_events (
      id            uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      workspace_id  uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
      -- A dotted name from core's SECURITY_ACTIONS, such as 'token.created'.
      action        text NOT NULL CHECK (action ~ '^[a-z_]+\\.[a-z_]+$' AND length(action) <= 64),
      actor_type    text NOT NULL CHECK (actor_type IN ('user', 'operator', 'processor', 'system')),
      -- Kept when the user is removed, so the log still says who it was (actor_label).
      actor_user_id uuid REFERENCES users (id) ON DELETE SET NULL,
      actor_label   text CHECK (length(actor_label) <= 320),
      target_type   text CHECK (target_type ~ '^[a-z_]+$' AND length(target_type) <= 64),
      target_id     text CHECK (length(target_id) <= 200),
      target_label  text CHECK (length(target_label) <= 2048),
      ip_address    inet,
      user_agent    text CHECK (length(user_agent) <= 512),
      details       jsonb NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(details) = 'object'),
      created_at    timestamptz(3) NOT NULL DEFAULT now()
    );
    CREATE INDEX security_events_workspace_idx ON security_events (workspace_id, created_at DESC, id DESC);
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TABLE security_events;');
}
