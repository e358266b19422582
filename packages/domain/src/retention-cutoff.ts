import type { Db } from '@retention/db';

/**
 * The retention jobs' cutoff (the webhook log's, the Stripe inbox's): `olderThanDays` before now
 * on the database's clock, read once for a whole run, so every batch of the run deletes by the
 * same line whatever the workers' clocks say.
 */
export async function retentionCutoff(db: Db, olderThanDays: number): Promise<Date> {
  const { rows } = await db.raw<{ rows: Array<{ cutoff: Date }> }>(`SELECT now() - ? * interval '1 day' AS cutoff`, [
    olderThanDays,
  ]);
  return rows[0]!.cutoff;
}

/**
 * Runs `deleteBatch` (one short statement deleting at most `batchSize` rows, claimed `FOR UPDATE
 * SKIP LOCKED`) until one deletes fewer than a batch: nothing is left past the cutoff, or another
 * run (a worker replica) holds the rest. Returns the rows deleted in all.
 */
export async function deleteInBatches(batchSize: number, deleteBatch: () => Promise<number>): Promise<number> {
  let total = 0;
  for (;;) {
    const deleted = await deleteBatch();
    total += deleted;
    if (deleted < batchSize) return total;
  }
}
