import type { Knex } from 'knex';

/**
 * Who made a token, kept after they leave (docs/dashboard-api.md, "API tokens"): created_by
 * goes empty when its user is removed (ON DELETE SET NULL, 0010), and an empty creator read as
 * "made by the operator CLI", so a removed admin's token was credited to the CLI. The creator's
 * e-mail is now kept on the row at creation. Existing rows take it from their creator, or, where
 * that user is gone already, from the security log's token.created record made by a signed-in
 * user (its actor_label is their e-mail, userActor in @retention/domain). A row left empty was
 * made by the operator CLI (or by the demo seed).
 *
 * The e-mail is filled in by a trigger on insert, from created_by, rather than by the code that
 * inserts: during a rolling deploy the previous release keeps minting tokens without knowing the
 * column, and those must not lose their creator's name once the creator is removed.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    -- A long transaction on the table fails the migration at once (run it again) rather than
    -- queueing every reader and writer behind its lock (docs/upgrading.md).
    SET LOCAL lock_timeout = '10s';
    ALTER TABLE api_tokens ADD COLUMN created_by_email text CHECK (length(created_by_email) <= 320);
    CREATE FUNCTION api_tokens_created_by_email() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF NEW.created_by IS NOT NULL AND NEW.created_by_email IS NULL THEN
        NEW.created_by_email := (SELECT email FROM users WHERE id = NEW.created_by);
      END IF;
      RETURN NEW;
    END $$;
    CREATE TRIGGER api_tokens_created_by_email BEFORE INSERT ON api_tokens
      FOR EACH ROW EXECUTE FUNCTION api_tokens_created_by_email();
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
  await knex.raw(`
    DROP TRIGGER api_tokens_created_by_email ON api_tokens;
    DROP FUNCTION api_tokens_created_by_email();
    ALTER TABLE api_tokens DROP COLUMN created_by_email;
  `);
}
