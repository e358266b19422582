import type { Knex } from 'knex';
import { openSecret } from '@retention/core';
import { requireSecretsKey, type MigrationContext } from './context.js';

/**
 * A processor connection's mode, and why an event was set aside (docs/processor.md, "Mode" and
 * "Set aside").
 *
 * - `processor_connections.mode` (`test` or `live`): the restricted key's prefix when it has a
 *   key (`rk_test_` / `rk_live_`), else the `livemode` of the first correctly signed event of
 *   the account itself; null until one of them is known. Existing connections take it here the
 *   same way: from their key (opened with SECRETS_KEY, the only way to read its prefix), else
 *   from their oldest stored event that is not a connected account's.
 * - `processor_events.ignored_reason`: an event stored and answered 2xx but not applied, and
 *   why: from a connected account (Stripe Connect), of the other mode than the connection's,
 *   or a signup's first payment (no recovery campaign). Other ignored events (types we do not
 *   handle, one-off invoices) keep it null. Counted by reason in `processor status`.
 *
 * A migration runs in one transaction, so the lock the first ALTER takes, which holds back the
 * API's inserts of received events, lasts to the end: this one reads as little of a large inbox
 * as it can. Both columns are new and null in every existing row, which both checks accept, so
 * the checks are added NOT VALID and left so (Postgres enforces a NOT VALID check on every insert
 * and update; only a scan of the rows already there, all null, is skipped). A connection without
 * a key finds its first own event through the received-time index and stops there. The partial
 * index is the one full read of the table (docs/upgrading.md, "Migration 0028").
 */
export async function up(knex: Knex, context?: MigrationContext): Promise<void> {
  await knex.raw(`
    -- A long transaction on the table fails the migration at once (run it again) rather than
    -- queueing every reader and writer behind its lock (docs/upgrading.md).
    SET LOCAL lock_timeout = '10s';
    ALTER TABLE processor_connections ADD COLUMN mode text CHECK (mode IN ('test', 'live'));
    ALTER TABLE processor_events
      ADD COLUMN ignored_reason text,
      ADD CONSTRAINT processor_events_ignored_reason_check
        CHECK (ignored_reason IN ('connected_account', 'other_mode', 'signup_payment')) NOT VALID,
      ADD CONSTRAINT processor_events_ignored_reason_state_check
        CHECK (ignored_reason IS NULL OR state = 'ignored') NOT VALID;
  `);
  await knex.raw(`
    CREATE INDEX processor_events_set_aside_idx ON processor_events (connection_id, ignored_reason)
      WHERE ignored_reason IS NOT NULL;
  `);
  const { rows: keyed } = await knex.raw<{ rows: Array<{ id: string; api_key_sealed: string }> }>(
    'SELECT id, api_key_sealed FROM processor_connections WHERE api_key_sealed IS NOT NULL',
  );
  if (keyed.length > 0) {
    const key = requireSecretsKey(context);
    for (const row of keyed) {
      const mode = openSecret(key, row.api_key_sealed).startsWith('rk_live_') ? 'live' : 'test';
      await knex('processor_connections').where({ id: row.id }).update({ mode });
    }
  }
  await knex.raw(`
    UPDATE processor_connections c
       SET mode = CASE WHEN first.livemode THEN 'live' ELSE 'test' END
      FROM processor_connections keyless
      CROSS JOIN LATERAL (
            SELECT (e.payload->>'livemode')::boolean AS livemode
              FROM processor_events e
             WHERE e.connection_id = keyless.id
               AND json_typeof(e.payload->'livemode') = 'boolean'
               AND json_typeof(e.payload->'account') IS DISTINCT FROM 'string'
             ORDER BY e.received_at
             LIMIT 1) AS first
     WHERE keyless.mode IS NULL AND c.id = keyless.id;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE processor_events DROP COLUMN ignored_reason;
    ALTER TABLE processor_connections DROP COLUMN mode;
  `);
}
