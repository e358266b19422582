import type { Knex } from 'knex';
import { AMOUNT_CHECK, CURRENCY_CHECK } from './sql.js';

/** Failed-payment recovery campaigns: at most one per processor invoice in a workspace. */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE recovery_campaigns (
      id               uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      workspace_id     uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
      customer_id      uuid NOT NULL,
      subscription_id  uuid NOT NULL,
      psp_invoice_id   text NOT NULL CHECK (length(psp_invoice_id) BETWEEN 1 AND 255),
      amount_cents     bigint NOT NULL ${AMOUNT_CHECK('amount_cents')},
      currency         text NOT NULL ${CURRENCY_CHECK('currency')},
      status           text NOT NULL CHECK (status IN ('in_flight', 'recovered', 'lost', 'abandoned')),
      decline_code     text NOT NULL CHECK (length(decline_code) BETWEEN 1 AND 100),
      decline_category text NOT NULL CHECK (decline_category IN ('soft', 'card_update_required', 'authentication_required', 'revoked', 'fraud', 'unknown')),
      recovered_via    text CHECK (recovered_via IN ('retry', 'customer_update', 'spontaneous', 'manual')),
      first_failed_at  timestamptz(3) NOT NULL,
      recovered_at     timestamptz(3),
      closed_at        timestamptz(3),
      -- The operator who closed it by hand (recovered or lost from the dashboard or the CLI).
      closed_by_user_id uuid REFERENCES users (id) ON DELETE SET NULL,
      created_at       timestamptz(3) NOT NULL DEFAULT now(),
      updated_at       timestamptz(3) NOT NULL DEFAULT now(),
      UNIQUE (workspace_id, psp_invoice_id),
      FOREIGN KEY (workspace_id, customer_id) REFERENCES customers (workspace_id, id) ON DELETE CASCADE,
      FOREIGN KEY (workspace_id, customer_id, subscription_id)
        REFERENCES subscriptions (workspace_id, customer_id, id) ON DELETE CASCADE,
      -- The status decides which of the closing fields are set.
      CONSTRAINT recovery_campaigns_status_fields CHECK (
        (status = 'in_flight' AND closed_at IS NULL AND recovered_at IS NULL AND recovered_via IS NULL)
        OR (status = 'recovered' AND closed_at IS NOT NULL AND recovered_at IS NOT NULL AND recovered_via IS NOT NULL)
        OR (status IN ('lost', 'abandoned') AND closed_at IS NOT NULL AND recovered_at IS NULL AND recovered_via IS NULL)
      ),
      CONSTRAINT recovery_campaigns_closed_by_closed CHECK (closed_by_user_id IS NULL OR status <> 'in_flight')
    );
    CREATE INDEX recovery_campaigns_list_idx ON recovery_campaigns (workspace_id, first_failed_at DESC, id DESC);
    CREATE INDEX recovery_campaigns_status_idx ON recovery_campaigns (workspace_id, status, first_failed_at DESC, id DESC);
    CREATE INDEX recovery_campaigns_customer_idx ON recovery_campaigns (workspace_id, customer_id, first_failed_at DESC, id DESC);
    -- The stale-campaign job scans open campaigns of every workspace by age.
    CREATE INDEX recovery_campaigns_open_age_idx ON recovery_campaigns (first_failed_at) WHERE status = 'in_flight';
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TABLE recovery_campaigns;');
}
