import {
  conflict,
  openSecretTelling,
  previousKey,
  sealSecret,
  SecretOpenError,
  type SecretsKeyring,
} from '@retention/core';
import { inTransaction, type Db, type Queryable } from '@retention/db';
import { SEALED_TABLES, sealedColumnsOf, type SealedTable, type SecretKind } from './sealed-columns.js';

/**
 * `secrets reseal`: the second half of rotating SECRETS_KEY (docs/operator-cli.md, "Rotating
 * the key"). Every process already opens with SECRETS_KEY, then SECRETS_KEY_PREVIOUS; this moves
 * every stored secret to SECRETS_KEY, so SECRETS_KEY_PREVIOUS can be dropped.
 *
 * - A value SECRETS_KEY already opens is left as it is: a second run changes nothing, and a
 *   value written meanwhile by a process with the new key needs nothing.
 * - Batches of rows, each in a transaction that locks its rows (FOR NO KEY UPDATE, as Roll
 *   secret and processor connect lock them) while it opens and re-seals them: a Roll secret or
 *   connect during the run waits for the batch, or the batch waits for it and reads what it
 *   wrote, so no write is lost. A crash between batches leaves each row wholly old (the
 *   previous key opens it) or wholly new (SECRETS_KEY opens it); running again finishes it.
 * - A value neither key opens stops the run before anything is changed: see unreadableError.
 */

export interface ResealResult {
  object: 'secrets_reseal';
  /** Values the previous key opened, now sealed with SECRETS_KEY, by kind. */
  resealed: Record<SecretKind, number>;
  /** Values SECRETS_KEY already opened, left as they were. */
  already_current: number;
}

/** Rows per transaction: each is locked only for the few milliseconds its batch takes. */
const BATCH_ROWS = 200;
const FIRST_ID = '00000000-0000-0000-0000-000000000000';

interface Unreadable {
  table: SealedTable;
  id: string;
  kind: SecretKind;
}

type Row = { id: string } & Record<string, string | null>;

export async function resealSecrets(db: Db, keys: SecretsKeyring, batchRows = BATCH_ROWS): Promise<ResealResult> {
  const result: ResealResult = {
    object: 'secrets_reseal',
    resealed: { signing_secrets: 0, previous_signing_secrets: 0, processor_webhook_secrets: 0, processor_api_keys: 0 },
    already_current: 0,
  };
  // Everything is checked first, without locks, so that a value no key opens changes nothing.
  const unreadable = await findUnreadable(db, keys, batchRows);
  if (unreadable.length > 0) throw unreadableError(keys, unreadable, false);

  for (const table of SEALED_TABLES) {
    for (let after = FIRST_ID; ;) {
      const batch = await inTransaction(db, async (trx) => {
        const rows = await batchOf(trx, table, after, batchRows, 'lock');
        const plan = planBatch(keys, table, rows);
        // Written meanwhile by a process with neither key: nothing of this batch is written.
        if (plan.unreadable.length > 0) throw unreadableError(keys, plan.unreadable, true);
        for (const { id, values } of plan.changes) await trx(table).where({ id }).update(values);
        return { plan, lastId: rows.at(-1)?.id };
      });
      // Counted once committed: inTransaction may run a batch again after a deadlock.
      for (const [kind, count] of Object.entries(batch.plan.resealed)) result.resealed[kind as SecretKind] += count;
      result.already_current += batch.plan.alreadyCurrent;
      if (batch.lastId === undefined) break;
      after = batch.lastId;
    }
  }
  return result;
}

async function findUnreadable(db: Db, keys: SecretsKeyring, batchRows: number): Promise<Unreadable[]> {
  const unreadable: Unreadable[] = [];
  for (const table of SEALED_TABLES) {
    for (let after = FIRST_ID; ;) {
      const rows = await batchOf(db, table, after, batchRows, 'no-lock');
      if (rows.length === 0) break;
      unreadable.push(...planBatch(keys, table, rows).unreadable);
      after = rows.at(-1)!.id;
    }
  }
  return unreadable;
}

async function batchOf(
  db: Queryable,
  table: SealedTable,
  after: string,
  rows: number,
  lock: 'lock' | 'no-lock',
): Promise<Row[]> {
  const query = db(table)
    .where('id', '>', after)
    .orderBy('id')
    .limit(rows)
    .select('id', ...sealedColumnsOf(table).map(({ column }) => column));
  return (await (lock === 'lock' ? query.forNoKeyUpdate() : query)) as Row[];
}

/** What a batch needs: each value the previous key opens, sealed again with SECRETS_KEY. */
function planBatch(keys: SecretsKeyring, table: SealedTable, rows: Row[]) {
  const plan = {
    changes: [] as Array<{ id: string; values: Record<string, string> }>,
    resealed: {} as Partial<Record<SecretKind, number>>,
    alreadyCurrent: 0,
    unreadable: [] as Unreadable[],
  };
  for (const row of rows) {
    const values: Record<string, string> = {};
    for (const { column, kind } of sealedColumnsOf(table)) {
      const sealed = row[column];
      if (sealed === null || sealed === undefined) continue;
      let opened: ReturnType<typeof openSecretTelling>;
      try {
        opened = openSecretTelling(keys, sealed);
      } catch (error) {
        if (!(error instanceof SecretOpenError)) throw error;
        plan.unreadable.push({ table, id: row.id, kind });
        continue;
      }
      if (opened.openedBy === 'current') {
        plan.alreadyCurrent += 1;
        continue;
      }
      values[column] = sealSecret(keys, opened.secret);
      plan.resealed[kind] = (plan.resealed[kind] ?? 0) + 1;
    }
    if (Object.keys(values).length > 0) plan.changes.push({ id: row.id, values });
  }
  return plan;
}

/** Ids named in the error, at most: enough to start with, never a page of them. */
const LISTED = 20;

/**
 * Refused, rather than re-sealing the rest and reporting these: a value neither key opens
 * almost always means SECRETS_KEY_PREVIOUS is not the old key (a typo, another install's key),
 * and a run that "succeeded" would invite dropping the previous key with secrets still behind
 * it. The ids say where to look; the values and the keys are never shown.
 */
function unreadableError(keys: SecretsKeyring, unreadable: Unreadable[], midway: boolean) {
  const names = unreadable
    .slice(0, LISTED)
    .map(({ table, id, kind }) => `${table} ${id} (${kind})`)
    .join(', ');
  const more = unreadable.length > LISTED ? ` and ${unreadable.length - LISTED} more` : '';
  const refusal =
    previousKey(keys) === null
      ? 'do not open with SECRETS_KEY, and SECRETS_KEY_PREVIOUS is not set'
      : 'open with neither SECRETS_KEY nor SECRETS_KEY_PREVIOUS';
  const changed = midway
    ? 'The batches before it were re-sealed (SECRETS_KEY opens them); the rest was left as it was.'
    : 'Nothing was re-sealed.';
  return conflict(
    `${unreadable.length} stored secret(s) ${refusal}: ` +
      `${names}${more}. ${changed} Set SECRETS_KEY_PREVIOUS to the key they were sealed with and run again; if that ` +
      'key is lost, roll those endpoints\u2019 secrets with no overlap and connect the processor again ' +
      '(docs/operator-cli.md, "SECRETS_KEY"), then run again.',
  );
}
