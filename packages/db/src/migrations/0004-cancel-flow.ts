import type { Knex } from 'knex';
import { AMOUNT_CHECK, CURRENCY_CHECK } from './sql.js';

/** Finished cancel sessions, and the lifecycle e-mails and win-backs that emit events. */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE cancel_sessions (
      id                uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      workspace_id      uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
      customer_id       uuid NOT NULL,
      subscription_id   uuid,
      outcome           text NOT NULL CHECK (outcome IN ('saved_discount', 'saved_pause', 'saved_downgrade', 'saved_other', 'canceled', 'abandoned')),
      reason_code       text NOT NULL CHECK (reason_code IN ('too_expensive', 'missing_features', 'switched_service', 'unused', 'customer_service', 'too_complex', 'low_quality', 'other')),
      feedback          text CHECK (length(feedback) <= 5000),
      monthly_mrr_cents bigint NOT NULL ${AMOUNT_CHECK('monthly_mrr_cents')},
      currency          text NOT NULL ${CURRENCY_CHECK('currency')},
      created_at        timestamptz(3) NOT NULL DEFAULT now(),
      ended_at          timestamptz(3) NOT NULL DEFAULT now(),
      FOREIGN KEY (workspace_id, customer_id) REFERENCES customers (workspace_id, id) ON DELETE CASCADE,
      FOREIGN KEY (workspace_id, customer_id, subscription_id)
        REFERENCES subscriptions (workspace_id, customer_id, id) ON DELETE CASCADE,
      CHECK (ended_at >= created_at)
    );
    CREATE INDEX cancel_sessions_list_idx ON cancel_sessions (workspace_id, created_at DESC, id DESC);
    CREATE INDEX cancel_sessions_outcome_idx ON cancel_sessions (workspace_id, outcome, created_at DESC, id DESC);

    CREATE TABLE trial_reminders (
      id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      workspace_id    uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
      customer_id     uuid NOT NULL,
      subscription_id uuid NOT NULL,
      trial_end       timestamptz(3) NOT NULL,
      sent_at         timestamptz(3) NOT NULL DEFAULT now(),
      FOREIGN KEY (workspace_id, customer_id, subscription_id)
        REFERENCES subscriptions (workspace_id, customer_id, id) ON DELETE CASCADE
    );
    CREATE INDEX trial_reminders_list_idx ON trial_reminders (workspace_id, sent_at DESC, id DESC);

    CREATE TABLE reactivations (
      id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      workspace_id    uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
      customer_id     uuid NOT NULL,
      subscription_id uuid NOT NULL,
      sent_at         timestamptz(3) NOT NULL DEFAULT now(),
      FOREIGN KEY (workspace_id, customer_id, subscription_id)
        REFERENCES subscriptions (workspace_id, customer_id, id) ON DELETE CASCADE
    );
    CREATE INDEX reactivations_list_idx ON reactivations (workspace_id, sent_at DESC, id DESC);

    CREATE TABLE winbacks (
      id                  uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      workspace_id        uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
      customer_id         uuid NOT NULL,
      psp_subscription_id text NOT NULL CHECK (length(psp_subscription_id) BETWEEN 1 AND 255),
      days_away           integer NOT NULL CHECK (days_away >= 0),
      amount_cents        bigint NOT NULL ${AMOUNT_CHECK('amount_cents')},
      currency            text NOT NULL ${CURRENCY_CHECK('currency')},
      recorded_at         timestamptz(3) NOT NULL DEFAULT now(),
      -- One win-back per new processor subscription: a replayed sync records nothing twice.
      UNIQUE (workspace_id, psp_subscription_id),
      FOREIGN KEY (workspace_id, customer_id) REFERENCES customers (workspace_id, id) ON DELETE CASCADE
    );
    CREATE INDEX winbacks_list_idx ON winbacks (workspace_id, recorded_at DESC, id DESC);
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(
    'DROP TABLE winbacks; DROP TABLE reactivations; DROP TABLE trial_reminders; DROP TABLE cancel_sessions;',
  );
}
