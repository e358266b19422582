import type { Knex } from 'knex';
import { CURRENCY_CHECK } from './sql.js';

/** Workspaces, the people in them, their API tokens, and the FX table. */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE workspaces (
      id               uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      name             text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
      processor_status text NOT NULL DEFAULT 'connected' CHECK (processor_status IN ('connected', 'disconnected')),
      display_currency text NOT NULL DEFAULT 'usd' ${CURRENCY_CHECK('display_currency')},
      created_at       timestamptz(3) NOT NULL DEFAULT now(),
      updated_at       timestamptz(3) NOT NULL DEFAULT now()
    );

    CREATE TABLE users (
      id           uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
      email        text NOT NULL CHECK (email LIKE '_%@_%'),
      role         text NOT NULL CHECK (role IN ('owner', 'admin', 'member')),
      created_at   timestamptz(3) NOT NULL DEFAULT now()
    );
    CREATE UNIQUE INDEX users_workspace_email_key ON users (workspace_id, lower(email));

    -- Only the SHA-256 of a token is kept; the value is shown once, at creation.
    CREATE TABLE api_tokens (
      id                    uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      workspace_id          uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
      name                  text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
      token_hash            text NOT NULL UNIQUE CHECK (token_hash ~ '^[0-9a-f]{64}$'),
      token_hint            text NOT NULL CHECK (length(token_hint) = 4),
      rate_limit_per_minute integer NOT NULL DEFAULT 60 CHECK (rate_limit_per_minute > 0),
      created_at            timestamptz(3) NOT NULL DEFAULT now(),
      revoked_at            timestamptz(3),
      last_used_at          timestamptz(3)
    );
    CREATE INDEX api_tokens_workspace_idx ON api_tokens (workspace_id, created_at DESC);

    -- Units of each currency per one US dollar; overrides the defaults shipped in core.
    CREATE TABLE fx_rates (
      currency   text PRIMARY KEY ${CURRENCY_CHECK('currency')},
      per_usd    numeric(30, 12) NOT NULL CHECK (per_usd > 0),
      updated_at timestamptz(3) NOT NULL DEFAULT now()
    );
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TABLE fx_rates; DROP TABLE api_tokens; DROP TABLE users; DROP TABLE workspaces;');
}
