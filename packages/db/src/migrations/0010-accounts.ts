import type { Knex } from 'knex';

/**
 * Accounts for the dashboard (docs/dashboard-api.md): passwords and sign-in times on users,
 * cookie sessions, one-time links (invitations, password resets), and what Roll secret and the
 * auto-disable alert need on webhook endpoints. Sessions and links are stored only as the
 * SHA-256 of their value. Value lists are written out: a migration is a snapshot.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE users
      ADD COLUMN name            text CHECK (length(name) BETWEEN 1 AND 200),
      ADD COLUMN password_hash   text CHECK (length(password_hash) <= 512),
      ADD COLUMN last_sign_in_at timestamptz(3);
    -- Sign-in is by e-mail alone, so an address may hold a password in one workspace only.
    CREATE UNIQUE INDEX users_email_with_password_key ON users (lower(email)) WHERE password_hash IS NOT NULL;
    CREATE INDEX users_workspace_idx ON users (workspace_id, created_at);

    CREATE TABLE user_sessions (
      id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      token_hash      text NOT NULL UNIQUE CHECK (token_hash ~ '^[0-9a-f]{64}$'),
      user_id         uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
      workspace_id    uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
      created_at      timestamptz(3) NOT NULL DEFAULT now(),
      last_seen_at    timestamptz(3) NOT NULL DEFAULT now(),
      idle_expires_at timestamptz(3) NOT NULL,
      expires_at      timestamptz(3) NOT NULL,
      revoked_at      timestamptz(3),
      ip_address      inet,
      user_agent      text CHECK (length(user_agent) <= 512)
    );
    CREATE INDEX user_sessions_user_idx ON user_sessions (user_id) WHERE revoked_at IS NULL;

    -- One-time links: invitations (7 days) and password resets (1 hour).
    CREATE TABLE account_links (
      id           uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      token_hash   text NOT NULL UNIQUE CHECK (token_hash ~ '^[0-9a-f]{64}$'),
      kind         text NOT NULL CHECK (kind IN ('invitation', 'password_reset')),
      workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
      email        text NOT NULL CHECK (email LIKE '_%@_%' AND length(email) <= 320),
      role         text CHECK (role IN ('owner', 'admin', 'member')),
      -- The account a reset is for.
      user_id      uuid REFERENCES users (id) ON DELETE CASCADE,
      invited_by   uuid REFERENCES users (id) ON DELETE SET NULL,
      created_at   timestamptz(3) NOT NULL DEFAULT now(),
      expires_at   timestamptz(3) NOT NULL,
      used_at      timestamptz(3),
      revoked_at   timestamptz(3),
      CHECK ((kind = 'invitation') = (role IS NOT NULL)),
      CHECK ((kind = 'password_reset') = (user_id IS NOT NULL))
    );
    CREATE INDEX account_links_open_idx ON account_links (workspace_id, kind, lower(email))
      WHERE used_at IS NULL AND revoked_at IS NULL;

    -- Who minted a token, for the tokens page; kept empty once that user is removed.
    ALTER TABLE api_tokens ADD COLUMN created_by uuid REFERENCES users (id) ON DELETE SET NULL;

    ALTER TABLE webhook_endpoints
      ADD COLUMN previous_signing_secret    text CHECK (previous_signing_secret LIKE 'whsec\\_%'),
      ADD COLUMN previous_secret_expires_at timestamptz(3),
      ADD COLUMN disabled_at                timestamptz(3),
      ADD COLUMN alert_dismissed_at         timestamptz(3),
      ADD CHECK ((previous_signing_secret IS NULL) = (previous_secret_expires_at IS NULL));

    -- When an endpoint goes off (by hand or after its failures), remember when, and raise a
    -- fresh alert: whoever turns it off, the worker included, need not know about the banner.
    CREATE FUNCTION webhook_endpoints_disabled_at() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF OLD.enabled AND NOT NEW.enabled THEN
        NEW.disabled_at := now();
        NEW.alert_dismissed_at := NULL;
      ELSIF NEW.enabled THEN
        NEW.disabled_at := NULL;
      END IF;
      RETURN NEW;
    END $$;
    CREATE TRIGGER webhook_endpoints_disabled_at BEFORE UPDATE OF enabled ON webhook_endpoints
      FOR EACH ROW EXECUTE FUNCTION webhook_endpoints_disabled_at();
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    DROP TRIGGER webhook_endpoints_disabled_at ON webhook_endpoints;
    DROP FUNCTION webhook_endpoints_disabled_at();
    ALTER TABLE webhook_endpoints
      DROP COLUMN previous_signing_secret, DROP COLUMN previous_secret_expires_at,
      DROP COLUMN disabled_at, DROP COLUMN alert_dismissed_at;
    ALTER TABLE api_tokens DROP COLUMN created_by;
    DROP TABLE account_links;
    DROP TABLE user_sessions;
    DROP INDEX users_workspace_idx;
    DROP INDEX users_email_with_password_key;
    ALTER TABLE users DROP COLUMN name, DROP COLUMN password_hash, DROP COLUMN last_sign_in_at;
  `);
}
