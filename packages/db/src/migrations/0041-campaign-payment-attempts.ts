import type { Knex } from 'knex';

/**
 * The processor's payment attempts of a campaign's invoice (docs/processor.md, "Payment
 * attempts"): each failed attempt Stripe reports (`invoice.payment_failed`, its `attempt_count`
 * growing with each retry), one row per campaign and attempt number, when it failed and its
 * decline code; and on the campaign, when the processor will try next
 * (`next_payment_attempt_at`, null when it said no retry is scheduled), with the processor's time
 * of the event that said so and that event's attempt number, so that only a newer fact replaces
 * it (events arrive out of order). `next_payment_attempt_as_of` null: the processor never said
 * (a campaign opened before this migration, or by the operator CLI or fixtures).
 *
 * Nothing is filled in for campaigns opened before: Stripe's events of their earlier attempts
 * were applied without keeping them.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE campaign_payment_attempts (
      campaign_id      uuid NOT NULL REFERENCES recovery_campaigns (id) ON DELETE CASCADE,
      attempt_number   integer NOT NULL CHECK (attempt_number BETWEEN 1 AND 10000),
      workspace_id     uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
      failed_at        timestamptz(3) NOT NULL,
      decline_code     text NOT NULL CHECK (length(decline_code) BETWEEN 1 AND 100),
      decline_category text NOT NULL CHECK (decline_category IN ('soft', 'card_update_required', 'authentication_required', 'revoked', 'fraud', 'unknown')),
      PRIMARY KEY (campaign_id, attempt_number)
    );
    ALTER TABLE recovery_campaigns
      ADD COLUMN next_payment_attempt_at timestamptz(3),
      ADD COLUMN next_payment_attempt_as_of timestamptz(3),
      ADD COLUMN next_payment_attempt_count integer,
      ADD CONSTRAINT recovery_campaigns_next_payment_attempt_known
        CHECK (next_payment_attempt_as_of IS NOT NULL OR (next_payment_attempt_at IS NULL AND next_payment_attempt_count IS NULL));
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    DROP TABLE campaign_payment_attempts;
    ALTER TABLE recovery_campaigns
      DROP COLUMN next_payment_attempt_at,
      DROP COLUMN next_payment_attempt_as_of,
      DROP COLUMN next_payment_attempt_count;
  `);
}
