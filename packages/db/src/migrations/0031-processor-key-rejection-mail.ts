import type { Knex } from 'knex';

/**
 * An e-mail owed to a workspace's owners because Stripe refused its key (docs/processor.md,
 * "When Stripe refuses the key"): set in the transaction that disconnects the connection for
 * it, so it exists only if that transition commits and once per transition; taken (set back to
 * false) by the one worker whose UPDATE claims it, which sends the e-mail. The partial index
 * holds only the connections owed one, so the workers' look for them costs nothing.
 * Connections already refused before it owe none: they were not told then, and an e-mail at the
 * deploy about a refusal of weeks ago would read as news.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE processor_connections ADD COLUMN key_rejection_mail_due boolean NOT NULL DEFAULT false;
    CREATE INDEX processor_connections_key_rejection_mail_idx ON processor_connections (id)
      WHERE key_rejection_mail_due;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    DROP INDEX processor_connections_key_rejection_mail_idx;
    ALTER TABLE processor_connections DROP COLUMN key_rejection_mail_due;
  `);
}
