import type { Knex } from 'knex';
import { AMOUNT_CHECK, CURRENCY_CHECK } from './sql.js';

/**
 * Customers and subscriptions mirrored from the payment processor. Child rows reference
 * their parents through (workspace_id, id) pairs, so a row can never point into another
 * workspace, whatever the application does.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE customers (
      id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      workspace_id    uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
      psp_customer_id text NOT NULL CHECK (length(psp_customer_id) BETWEEN 1 AND 255),
      email           text NOT NULL CHECK (email LIKE '_%@_%'),
      name            text,
      -- Stored trimmed and lowercase so that tag matching is case-insensitive.
      tags            text[] NOT NULL DEFAULT '{}' CHECK (tags::text = lower(tags::text)),
      created_at      timestamptz(3) NOT NULL DEFAULT now(),
      updated_at      timestamptz(3) NOT NULL DEFAULT now(),
      UNIQUE (workspace_id, psp_customer_id),
      UNIQUE (workspace_id, id)
    );
    CREATE INDEX customers_list_idx ON customers (workspace_id, created_at DESC, id DESC);
    CREATE INDEX customers_email_idx ON customers (workspace_id, lower(email));
    CREATE INDEX customers_tags_idx ON customers USING gin (tags);

    CREATE TABLE subscriptions (
      id                  uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      workspace_id        uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
      customer_id         uuid NOT NULL,
      psp_subscription_id text NOT NULL CHECK (length(psp_subscription_id) BETWEEN 1 AND 255),
      status              text NOT NULL CHECK (status IN ('trialing', 'active', 'past_due', 'paused', 'canceled')),
      plan_name           text NOT NULL,
      amount_cents        bigint NOT NULL ${AMOUNT_CHECK('amount_cents')},
      currency            text NOT NULL ${CURRENCY_CHECK('currency')},
      interval            text NOT NULL CHECK (interval IN ('month', 'year')),
      trial_end           timestamptz(3),
      current_period_end  timestamptz(3),
      canceled_at         timestamptz(3),
      created_at          timestamptz(3) NOT NULL DEFAULT now(),
      updated_at          timestamptz(3) NOT NULL DEFAULT now(),
      UNIQUE (workspace_id, psp_subscription_id),
      UNIQUE (workspace_id, id),
      UNIQUE (workspace_id, customer_id, id),
      FOREIGN KEY (workspace_id, customer_id) REFERENCES customers (workspace_id, id) ON DELETE CASCADE
    );
    CREATE INDEX subscriptions_customer_idx ON subscriptions (workspace_id, customer_id, created_at DESC, id DESC);
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TABLE subscriptions; DROP TABLE customers;');
}
