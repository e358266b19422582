import { invalidField } from '@retention/core';
import { inTransaction, type Db, type Transaction } from '@retention/db';
import { recordEvents } from '../outbox.js';
import { assertPastDate } from '../validate.js';
import { getWorkspace } from '../workspaces.js';
import { campaignEventFields } from './event-data.js';

export interface CloseStaleOptions {
  /** Campaigns whose first failure is older than this many days are closed. */
  olderThanDays: number;
  /** Only this workspace's campaigns; every workspace's when omitted. */
  workspaceId?: string;
  /**
   * The moment the age is measured from and `closed_at` is set to; the database's clock when
   * omitted. Tests (and a replay after an outage) may set it, in the future too.
   */
  now?: Date;
  /** Campaigns closed per transaction. */
  batchSize?: number;
  /**
   * The run is history replayed at `now` (the demo seed replays the worker's job): its events
   * are recorded at `now` too, not at the database's clock. Needs `now`, not in the future.
   */
  replay?: boolean;
}

/** A few hundred per transaction: locks are short and a huge backlog never makes one giant transaction. */
export const STALE_BATCH_SIZE = 500;
const MAX_DAYS = 3650;

interface ClosedRow {
  id: string;
  workspace_id: string;
  amount_cents: number;
  currency: string;
  first_failed_at: Date;
  customer_email: string;
}

/**
 * Closes open campaigns older than `olderThanDays` as `abandoned`, each with its
 * `recovery.lost` event (`reason: "auto_close_stale"`), in batches of a transaction each.
 *
 * Safe to run from several workers at once: each batch claims its rows with
 * `FOR UPDATE SKIP LOCKED`, so concurrent runs split the work instead of queueing behind one
 * another, and the status is checked again under the lock, so no campaign is closed twice
 * and no event is written twice. Returns the ids this call closed.
 */
export async function closeStaleCampaigns(db: Db, options: CloseStaleOptions): Promise<{ closed: string[] }> {
  const { olderThanDays, workspaceId, now } = options;
  const batchSize = options.batchSize ?? STALE_BATCH_SIZE;
  if (!Number.isInteger(olderThanDays) || olderThanDays < 1 || olderThanDays > MAX_DAYS) {
    throw invalidField('older_than_days', `must be an integer between 1 and ${MAX_DAYS}`);
  }
  if (!Number.isInteger(batchSize) || batchSize < 1) throw invalidField('batch_size', 'must be a positive integer');
  if (now !== undefined && !(now instanceof Date && Number.isFinite(now.getTime()))) {
    throw invalidField('now', 'must be a valid date');
  }
  if (options.replay) {
    if (now === undefined) throw invalidField('now', 'is required to replay a run');
    assertPastDate(now, 'now');
  }
  const eventsAt = options.replay ? now : undefined;
  if (workspaceId !== undefined) await getWorkspace(db, workspaceId);

  // One cutoff for the whole run, so that later batches do not chase a moving line.
  const { rows } = await db.raw<{ rows: Array<{ cutoff: Date }> }>(
    'SELECT coalesce(CAST(? AS timestamptz), now()) - make_interval(days => ?) AS cutoff',
    [now ?? null, olderThanDays],
  );
  const cutoff = rows[0]!.cutoff;

  const closed: string[] = [];
  for (;;) {
    const batch = await inTransaction(db, (trx) => closeBatch(trx, { cutoff, workspaceId, now, batchSize, eventsAt }));
    closed.push(...batch);
    if (batch.length < batchSize) return { closed };
  }
}

async function closeBatch(
  trx: Transaction,
  {
    cutoff,
    workspaceId,
    now,
    batchSize,
    eventsAt,
  }: { cutoff: Date; workspaceId?: string; now?: Date; batchSize: number; eventsAt?: Date },
): Promise<string[]> {
  const inWorkspace = workspaceId === undefined ? '' : 'AND workspace_id = ?';
  const { rows } = await trx.raw<{ rows: ClosedRow[] }>(
    `WITH stale AS (
       SELECT id FROM recovery_campaigns
        WHERE status = 'in_flight' AND first_failed_at < ? ${inWorkspace}
        ORDER BY first_failed_at, id
        LIMIT ?
        FOR UPDATE SKIP LOCKED
     )
     UPDATE recovery_campaigns AS k
        SET status = 'abandoned', closed_at = coalesce(CAST(? AS timestamptz), now()), updated_at = now()
       FROM stale, customers AS c
      WHERE k.id = stale.id AND k.status = 'in_flight'
        AND c.workspace_id = k.workspace_id AND c.id = k.customer_id
     RETURNING k.id, k.workspace_id, k.amount_cents, k.currency, k.first_failed_at, c.email AS customer_email`,
    [cutoff, ...(workspaceId === undefined ? [] : [workspaceId]), batchSize, now ?? null],
  );
  // RETURNING has no order: events are written oldest campaign first, like the claim.
  rows.sort(
    (a, b) => a.first_failed_at.getTime() - b.first_failed_at.getTime() || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0),
  );
  await recordEvents(
    trx,
    rows.map((row) => ({
      workspaceId: row.workspace_id,
      type: 'recovery.lost' as const,
      data: { ...campaignEventFields(row, row.customer_email), reason: 'auto_close_stale' as const },
      ...(eventsAt !== undefined && { at: eventsAt }),
    })),
  );
  return rows.map((row) => row.id);
}
