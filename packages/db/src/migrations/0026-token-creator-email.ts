import type { Knex } from 'knex';

/**
 * Who made a token, kept after they leave (docs/dashboard-api.md, "API tokens"): created_by
 * goes empty when its user is removed (ON DELETE SET NULL, 0010), and an empty creator read as
 * "made by the operator CLI", so a removed admin's token was credited to the CLI. The creator's
 * e-mail is now kept on the row at creation. Existing rows take it from their creator, or, where
 * that user is gone already, from the security log's token.created record made by a signed-in
 * user (its actor_label is their e-mail, userActor in @retention/domain). A row left empty was
 * made by the operator CLI (or by the demo seed).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE api_tokens ADD COLUMN created_by_email text CHECK (length(created_by_email) <= 320);
    UPDATE api_tokens t SET created_by_email = u.email FROM users u WHERE u.id = t.created_by;
    UPDATE api_tokens t SET created_by_email = e.actor_label
      FROM security_events e
      WHERE t.created_by IS NULL
        AND e.workspace_id = t.workspace_id
        AND e.action = 'token.created'
        AND e.target_type = 'api_token'
        AND e.target_id = t.id::text
        AND e.actor_type = 'user'
        AND e.actor_label IS NOT NULL;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`ALTER TABLE api_tokens DROP COLUMN created_by_email;`);
}
