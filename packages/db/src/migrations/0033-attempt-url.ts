import type { Knex } from 'knex';

/**
 * Each webhook attempt keeps the URL it was sent to (docs/decisions.md, "Outbound webhooks"):
 * an endpoint's URL can be edited, and the log must not show old attempts under the new one.
 * For an attempt that sent nothing (skipped, refused) it is the endpoint's URL at that time.
 *
 * Existing rows take their endpoint's current URL: the best there is, since nothing recorded
 * the URL before. The column is NOT NULL with no default, so an insert that forgets it fails
 * rather than logging a guess. Adding it nullable is a moment's lock; the backfill rewrites
 * every row once (the table is bounded by the log's retention); SET NOT NULL scans it once.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE webhook_attempts ADD COLUMN url text;
    UPDATE webhook_attempts a SET url = e.url FROM webhook_endpoints e WHERE e.id = a.endpoint_id;
    ALTER TABLE webhook_attempts ALTER COLUMN url SET NOT NULL;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE webhook_attempts DROP COLUMN url;');
}
