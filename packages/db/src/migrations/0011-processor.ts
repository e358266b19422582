import type { Knex } from 'knex';

/**
 * The payment-processor connection (docs/processor.md): one connection per workspace, the
 * processor's events as received (the inbox: Postgres is the truth, the worker applies each
 * exactly once), the per-object ordering state that lets events arriving out of order be
 * applied by `created`, and the backfill's progress. Value lists are written out: a migration
 * is a snapshot of the schema on the day it was written.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE processor_connections (
      -- The unguessable id of the webhook URL: {BASE_URL}/processor/stripe/{id}.
      id                    uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      workspace_id          uuid NOT NULL UNIQUE REFERENCES workspaces (id) ON DELETE CASCADE,
      provider              text NOT NULL CHECK (provider IN ('stripe')),
      status                text NOT NULL CHECK (status IN ('pending', 'connected', 'disconnected')),
      -- AES-256-GCM under SECRETS_KEY; only the last four characters are ever shown.
      webhook_secret_sealed text NOT NULL,
      webhook_secret_last4  text NOT NULL CHECK (length(webhook_secret_last4) <= 4),
      api_key_sealed        text,
      api_key_last4         text CHECK (length(api_key_last4) <= 4),
      CHECK ((api_key_sealed IS NULL) = (api_key_last4 IS NULL)),
      disconnected_reason   text CHECK (disconnected_reason IN ('owner', 'key_rejected')),
      connected_at          timestamptz(3),
      -- The backfill: at most one run per workspace (the lock is a lease, so a dead worker's
      -- run is taken over), resumable from its cursor.
      backfill_status       text NOT NULL DEFAULT 'idle'
                            CHECK (backfill_status IN ('idle', 'queued', 'running', 'succeeded', 'failed')),
      backfill_phase        text CHECK (backfill_phase IN ('customers', 'subscriptions', 'invoices')),
      backfill_cursor       text,
      backfill_counts       jsonb NOT NULL DEFAULT '{"customers": 0, "subscriptions": 0, "invoices": 0}'
                            CHECK (jsonb_typeof(backfill_counts) = 'object'),
      backfill_error        text,
      backfill_locked_until timestamptz(3),
      -- Each claim of a run gets a new id; a superseded run (its lease lapsed, or the owner
      -- reconnected or disconnected) can no longer write its progress.
      backfill_run_id       uuid,
      backfill_started_at   timestamptz(3),
      backfill_finished_at  timestamptz(3),
      created_at            timestamptz(3) NOT NULL DEFAULT now(),
      updated_at            timestamptz(3) NOT NULL DEFAULT now()
    );
    CREATE INDEX processor_connections_backfill_idx ON processor_connections (backfill_status)
      WHERE backfill_status IN ('queued', 'running');

    CREATE TABLE processor_events (
      id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      connection_id   uuid NOT NULL REFERENCES processor_connections (id) ON DELETE CASCADE,
      workspace_id    uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
      psp_event_id    text NOT NULL CHECK (length(psp_event_id) BETWEEN 1 AND 255),
      type            text NOT NULL CHECK (length(type) BETWEEN 1 AND 255),
      -- The processor's own creation time (Stripe's \`created\`, whole seconds).
      psp_created_at  timestamptz(3) NOT NULL,
      payload         jsonb NOT NULL CHECK (jsonb_typeof(payload) = 'object'),
      received_at     timestamptz(3) NOT NULL DEFAULT now(),
      -- pending -> applied | ignored, or parked after the last failed attempt.
      state           text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'applied', 'ignored', 'parked')),
      applied_at      timestamptz(3),
      attempts        integer NOT NULL DEFAULT 0 CHECK (attempts >= 0),
      next_attempt_at timestamptz(3) NOT NULL DEFAULT now(),
      last_error      text CHECK (length(last_error) <= 2000),
      UNIQUE (connection_id, psp_event_id),
      CHECK ((state IN ('applied', 'ignored')) = (applied_at IS NOT NULL))
    );
    CREATE INDEX processor_events_due_idx ON processor_events (next_attempt_at, psp_created_at) WHERE state = 'pending';
    -- \`processor status\`: events received and the last one's time, counted here rather than
    -- kept on the connection, whose row would otherwise be a lock every accepted event waits on.
    CREATE INDEX processor_events_received_idx ON processor_events (connection_id, received_at DESC);
    CREATE INDEX processor_events_parked_idx ON processor_events (connection_id, received_at DESC) WHERE state = 'parked';

    -- Per processor object, the \`created\` of the newest event applied to it: an older event
    -- never overwrites a newer one, and an invoice once paid, voided or uncollectible stays so.
    CREATE TABLE processor_object_states (
      connection_id   uuid NOT NULL REFERENCES processor_connections (id) ON DELETE CASCADE,
      object_type     text NOT NULL CHECK (object_type IN ('customer', 'subscription', 'invoice')),
      psp_object_id   text NOT NULL CHECK (length(psp_object_id) BETWEEN 1 AND 255),
      last_created_at timestamptz(3) NOT NULL,
      state           jsonb NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(state) = 'object'),
      PRIMARY KEY (connection_id, object_type, psp_object_id)
    );
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TABLE processor_object_states; DROP TABLE processor_events; DROP TABLE processor_connections;');
}
