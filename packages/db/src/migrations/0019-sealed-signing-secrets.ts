import type { Knex } from 'knex';
import { openSecret, sealSecret } from '@retention/core';
import { requireSecretsKey, type MigrationContext } from './context.js';

/**
 * Webhook signing secrets at rest are sealed like the processor's (AES-256-GCM under
 * SECRETS_KEY, `v1.<iv>.<tag>.<ciphertext>`, packages/core/src/secret-box.ts), so a dump of the
 * database or a read-only SQL leak reveals none of them: `signing_secret` and
 * `previous_signing_secret` become `signing_secret_sealed` and `previous_signing_secret_sealed`,
 * every existing value sealed here, in Node (Postgres has no AES-GCM), then the plaintext
 * columns are dropped. The checks they had are kept in the sealed form: the current one is
 * required, each is shaped as a sealed value (a plaintext `whsec_` is refused), and the previous
 * one and its expiry are both set or both null.
 *
 * The key comes in the migration's context (migrateLatest's `secretsKey`): without it nothing
 * is changed, and the error names SECRETS_KEY. `down()` opens every value with the same key (or
 * SECRETS_KEY_PREVIOUS, during a rotation) and restores the plaintext columns and their checks;
 * a value no key can open (another key) fails it, changing nothing.
 *
 * The table is locked first, whole, for the rewrite: the lock waits for the transactions in
 * flight at most 10 s (past that the migration fails, changing nothing, and can be run again).
 * A worker or API of the previous release still running reads the dropped columns and fails
 * those statements until it is replaced: its deliveries stay pending, retried by the new
 * workers; nothing is ever sent unsigned.
 */

/** A value sealSecret makes: version, 12-byte IV, 16-byte tag, ciphertext, base64url. */
const SEALED_SHAPE = `'^v1\\.[A-Za-z0-9_-]{16}\\.[A-Za-z0-9_-]{22}\\.[A-Za-z0-9_-]+$'`;

/** Rows rewritten per statement: a table of many endpoints is never held in memory whole. */
const BATCH = 1_000;

type Columns = { current: string; previous: string };
const PLAIN: Columns = { current: 'signing_secret', previous: 'previous_signing_secret' };
const SEALED: Columns = { current: 'signing_secret_sealed', previous: 'previous_signing_secret_sealed' };

/** Writes `to` from `from` for every endpoint, `convert`ing each value (nulls stay null). */
async function rewrite(knex: Knex, from: Columns, to: Columns, convert: (value: string) => string): Promise<void> {
  for (let after = '00000000-0000-0000-0000-000000000000'; ;) {
    const { rows } = await knex.raw<{ rows: Array<{ id: string; current: string; previous: string | null }> }>(
      `SELECT id, ${from.current} AS current, ${from.previous} AS previous
         FROM webhook_endpoints WHERE id > ? ORDER BY id LIMIT ${BATCH}`,
      [after],
    );
    if (rows.length === 0) return;
    await knex.raw(
      `UPDATE webhook_endpoints e SET ${to.current} = s.current, ${to.previous} = s.previous
         FROM unnest(?::uuid[], ?::text[], ?::text[]) AS s (id, current, previous)
        WHERE e.id = s.id`,
      [
        rows.map((row) => row.id),
        rows.map((row) => convert(row.current)),
        // Nulls in a text array: knex's binding types know only arrays of one primitive type.
        rows.map((row) => (row.previous === null ? null : convert(row.previous))) as unknown as string[],
      ],
    );
    after = rows[rows.length - 1]!.id;
  }
}

export async function up(knex: Knex, context?: MigrationContext): Promise<void> {
  const key = requireSecretsKey(context);
  await knex.raw(`
    SET LOCAL lock_timeout = '10s';
    LOCK TABLE webhook_endpoints IN ACCESS EXCLUSIVE MODE;
    ALTER TABLE webhook_endpoints ADD COLUMN signing_secret_sealed text, ADD COLUMN previous_signing_secret_sealed text;
  `);
  await rewrite(knex, PLAIN, SEALED, (secret) => sealSecret(key, secret));
  // Dropping the plaintext columns drops their checks, the pair check with the previous one too.
  await knex.raw(`
    ALTER TABLE webhook_endpoints
      DROP COLUMN signing_secret,
      DROP COLUMN previous_signing_secret,
      ALTER COLUMN signing_secret_sealed SET NOT NULL,
      ADD CONSTRAINT webhook_endpoints_signing_secret_sealed_check
        CHECK (signing_secret_sealed ~ ${SEALED_SHAPE}),
      ADD CONSTRAINT webhook_endpoints_previous_signing_secret_sealed_check
        CHECK (previous_signing_secret_sealed ~ ${SEALED_SHAPE}),
      ADD CONSTRAINT webhook_endpoints_previous_secret_pair_check
        CHECK ((previous_signing_secret_sealed IS NULL) = (previous_secret_expires_at IS NULL));
  `);
}

export async function down(knex: Knex, context?: MigrationContext): Promise<void> {
  const key = requireSecretsKey(context);
  await knex.raw(`
    SET LOCAL lock_timeout = '10s';
    LOCK TABLE webhook_endpoints IN ACCESS EXCLUSIVE MODE;
    ALTER TABLE webhook_endpoints ADD COLUMN signing_secret text, ADD COLUMN previous_signing_secret text;
  `);
  // A value sealed with another key throws SecretOpenError (naming SECRETS_KEY): nothing is kept.
  await rewrite(knex, SEALED, PLAIN, (sealed) => openSecret(key, sealed));
  // The checks of 0005 and 0010, written as they wrote them (Postgres names them the same way).
  await knex.raw(`
    ALTER TABLE webhook_endpoints
      DROP COLUMN signing_secret_sealed,
      DROP COLUMN previous_signing_secret_sealed,
      ALTER COLUMN signing_secret SET NOT NULL,
      ADD CHECK (signing_secret LIKE 'whsec\\_%'),
      ADD CHECK (previous_signing_secret LIKE 'whsec\\_%'),
      ADD CHECK ((previous_signing_secret IS NULL) = (previous_secret_expires_at IS NULL));
  `);
}
