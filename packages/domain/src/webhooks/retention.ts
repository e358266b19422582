import type { Db } from '@retention/db';
import { deleteInBatches, retentionCutoff } from '../retention-cutoff.js';

/**
 * Retention of the webhook log: attempts (each with up to 4 KB of the receiver's answer) and
 * finished deliveries older than `olderThanDays` are deleted; pending deliveries never are,
 * whatever their age. Small batches, each its own short statement, so no lock is held for
 * long and concurrent runs (worker replicas) only share the work.
 */
export interface PruneResult {
  attempts: number;
  deliveries: number;
}

export const DEFAULT_BATCH_SIZE = 1_000;

export async function pruneWebhookLog(
  db: Db,
  options: { olderThanDays: number; batchSize?: number },
): Promise<PruneResult> {
  const batchSize = options.batchSize ?? DEFAULT_BATCH_SIZE;
  const cutoff = await retentionCutoff(db, options.olderThanDays);
  const deleteOldest = (sql: string) =>
    deleteInBatches(
      batchSize,
      async () => (await db.raw<{ rowCount: number | null }>(sql, [cutoff, batchSize])).rowCount ?? 0,
    );
  const attempts = await deleteOldest(`
    DELETE FROM webhook_attempts WHERE id IN (
      SELECT id FROM webhook_attempts WHERE attempted_at < ? ORDER BY attempted_at LIMIT ?
      FOR UPDATE SKIP LOCKED)`);
  // A finished delivery's attempts go with it (ON DELETE CASCADE); its newest is older than
  // completed_at, so they were deleted above already, bar a few written a moment later.
  const deliveries = await deleteOldest(`
    DELETE FROM webhook_deliveries WHERE id IN (
      SELECT id FROM webhook_deliveries
       WHERE completed_at < ? AND status <> 'pending'
       ORDER BY completed_at LIMIT ?
      FOR UPDATE SKIP LOCKED)`);
  return { attempts, deliveries };
}
