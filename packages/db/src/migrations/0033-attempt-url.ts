import type { Knex } from 'knex';

/**
 * Each webhook attempt keeps the URL it was sent to (docs/decisions.md, "Each attempt keeps the
 * URL it was sent to"): an endpoint's URL can be edited, and the log must not show old attempts
 * under the new one. For an attempt that sent nothing (skipped, refused) it is the endpoint's
 * URL at that time.
 *
 * Nullable, and nothing is backfilled: NULL is an attempt logged before this migration, or by
 * the previous release during a rolling deploy (its inserts name no URL), whose URL nobody
 * recorded. Filling those with the endpoint's URL now would state a guess as a fact for every
 * attempt made before an edit; it would also rewrite the whole delivery log under this lock
 * (docs/upgrading.md, "Migration 0033"). Adding a nullable column without a default changes
 * only the catalog; the lock wait is bounded so that a long transaction on the table makes the
 * migration fail at once rather than queue every delivery behind it.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    SET LOCAL lock_timeout = '10s';
    ALTER TABLE webhook_attempts ADD COLUMN url text;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    SET LOCAL lock_timeout = '10s';
    ALTER TABLE webhook_attempts DROP COLUMN url;
  `);
}
