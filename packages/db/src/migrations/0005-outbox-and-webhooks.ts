import type { Knex } from 'knex';

/**
 * The event outbox and the webhook side: endpoints, one delivery per (event, endpoint),
 * and the attempt log. Postgres is the truth for all of it; Redis only schedules.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    -- Written in the same transaction as the change it describes; dispatch reads it in seq order.
    CREATE TABLE events (
      id            uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      seq           bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
      workspace_id  uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
      type          text NOT NULL CHECK (type IN ('recovery.opened', 'recovery.recovered', 'recovery.lost', 'cancel.saved', 'cancel.lost', 'trial.reminder_sent', 'reactivation.sent', 'winback.recorded')),
      data          jsonb NOT NULL CHECK (jsonb_typeof(data) = 'object'),
      created_at    timestamptz(3) NOT NULL DEFAULT now(),
      dispatched_at timestamptz(3)
    );
    CREATE INDEX events_undispatched_idx ON events (seq) WHERE dispatched_at IS NULL;
    CREATE INDEX events_workspace_idx ON events (workspace_id, created_at DESC, id DESC);

    CREATE TABLE webhook_endpoints (
      id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      workspace_id    uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
      name            text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
      url             text NOT NULL CHECK (url LIKE 'https://%' AND length(url) <= 2048),
      -- Empty means every event type.
      event_types     text[] NOT NULL DEFAULT '{}' CHECK (event_types <@ ARRAY['recovery.opened', 'recovery.recovered', 'recovery.lost', 'cancel.saved', 'cancel.lost', 'trial.reminder_sent', 'reactivation.sent', 'winback.recorded']::text[]),
      signing_secret  text NOT NULL CHECK (signing_secret LIKE 'whsec\\_%'),
      enabled         boolean NOT NULL DEFAULT true,
      failure_count   integer NOT NULL DEFAULT 0 CHECK (failure_count >= 0),
      disabled_reason text CHECK (disabled_reason IN ('manual', 'consecutive_failures')),
      last_success_at timestamptz(3),
      last_failure_at timestamptz(3),
      created_at      timestamptz(3) NOT NULL DEFAULT now(),
      updated_at      timestamptz(3) NOT NULL DEFAULT now(),
      CHECK (enabled = (disabled_reason IS NULL))
    );
    CREATE INDEX webhook_endpoints_workspace_idx ON webhook_endpoints (workspace_id, created_at DESC, id DESC);

    -- One row per (event, endpoint); a Send test makes a row with no event.
    CREATE TABLE webhook_deliveries (
      id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      workspace_id    uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
      endpoint_id     uuid NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
      event_id        uuid REFERENCES events (id) ON DELETE CASCADE,
      event_type      text NOT NULL CHECK (event_type IN ('recovery.opened', 'recovery.recovered', 'recovery.lost', 'cancel.saved', 'cancel.lost', 'trial.reminder_sent', 'reactivation.sent', 'winback.recorded', 'ping')),
      status          text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'succeeded', 'failed', 'skipped')),
      -- Attempts started, including the one in flight: an attempt's number is taken when it starts.
      attempt_count   integer NOT NULL DEFAULT 0 CHECK (attempt_count >= 0),
      next_attempt_at timestamptz(3),
      -- Set while an attempt is in flight; an expired lease means its worker died mid-attempt.
      attempt_started_at timestamptz(3),
      lease_expires_at timestamptz(3),
      created_at      timestamptz(3) NOT NULL DEFAULT now(),
      completed_at    timestamptz(3),
      -- event_id first: deleting events (a workspace) finds their deliveries through it.
      UNIQUE (event_id, endpoint_id),
      CHECK ((status = 'pending') = (next_attempt_at IS NOT NULL)),
      CHECK ((attempt_started_at IS NULL) = (lease_expires_at IS NULL)),
      CHECK (status = 'pending' OR lease_expires_at IS NULL),
      CHECK ((event_id IS NULL) = (event_type = 'ping'))
    );
    -- The sweeper looks for pending deliveries that are due.
    CREATE INDEX webhook_deliveries_due_idx ON webhook_deliveries (next_attempt_at) WHERE status = 'pending';
    CREATE INDEX webhook_deliveries_endpoint_idx ON webhook_deliveries (endpoint_id, status);

    -- The delivery log: one row per attempt, one per retry skipped, and one per attempt
    -- interrupted by a worker that died before recording its result.
    CREATE TABLE webhook_attempts (
      id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      delivery_id     uuid NOT NULL REFERENCES webhook_deliveries (id) ON DELETE CASCADE,
      endpoint_id     uuid NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
      event_type      text NOT NULL,
      attempt         integer NOT NULL CHECK (attempt >= 1),
      outcome         text NOT NULL CHECK (outcome IN ('succeeded', 'failed', 'skipped', 'interrupted')),
      http_status     integer CHECK (http_status BETWEEN 100 AND 999),
      error           text,
      response_body   text,
      duration_ms     integer NOT NULL CHECK (duration_ms >= 0),
      attempted_at    timestamptz(3) NOT NULL DEFAULT now(),
      next_attempt_at timestamptz(3),
      UNIQUE (delivery_id, attempt),
      CHECK ((outcome = 'succeeded') = (error IS NULL))
    );
    CREATE INDEX webhook_attempts_log_idx ON webhook_attempts (endpoint_id, attempted_at DESC, id DESC);
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(
    'DROP TABLE webhook_attempts; DROP TABLE webhook_deliveries; DROP TABLE webhook_endpoints; DROP TABLE events;',
  );
}
