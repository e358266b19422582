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
