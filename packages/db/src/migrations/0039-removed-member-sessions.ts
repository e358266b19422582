import type { Knex } from 'knex';

/**
 * The sessions of people removed from a team, by the hash of their cookie only (docs/dashboard-api.md,
 * "Removed from the team"): removing a person deletes their account and, by cascade, their sessions,
 * so a page they still had open was told only that its session had ended, as after an expiry. With
 * this, their next request is told they were removed. A row lasts as long as the session would have
 * (`expires_at`, its absolute end): the browser's cookie is dead by then either way.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE removed_member_sessions (
      token_hash   text PRIMARY KEY CHECK (token_hash ~ '^[0-9a-f]{64}$'),
      workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
      removed_at   timestamptz(3) NOT NULL DEFAULT now(),
      expires_at   timestamptz(3) NOT NULL
    );
    CREATE INDEX removed_member_sessions_expiry_idx ON removed_member_sessions (expires_at);
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TABLE removed_member_sessions');
}
