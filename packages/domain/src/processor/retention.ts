import { SET_ASIDE_REASONS } from '@retention/core';
import type { Db } from '@retention/db';
import { deleteInBatches, retentionCutoff } from '../retention-cutoff.js';

/**
 * Retention of the Stripe event inbox (docs/processor.md, "Retention"): events applied or
 * ignored and received more than `olderThanDays` ago are deleted; pending and parked ones never
 * are, whatever their age. Like the webhook log's (webhooks/retention.ts): small batches, each
 * its own short statement claiming its rows `FOR UPDATE SKIP LOCKED`, so no lock is held for
 * long and concurrent runs (worker replicas) only share the work.
 *
 * What `processor status` shows must not change when rows go:
 * - Each statement adds what it deleted to its connection's `pruned_*` counts (migration 0032)
 *   in the same statement, so a deleted event is always counted in exactly one place, and
 *   `events_received` (those counts plus the rows left) never goes back. One batch is one
 *   connection's: one connection row to update, nothing for two batches to lock in opposite
 *   orders.
 * - A connection's newest event (its `received_at`) is never deleted, so `last_event_at`, the
 *   newest `received_at`, stays what it was: kept from the rows rather than written on the
 *   connection by every accepted event, which would make the hot path wait on that row.
 */
export interface ProcessorEventsPruneResult {
  /** Events deleted, all connections together. */
  events: number;
}

export const DEFAULT_PROCESSOR_EVENTS_PRUNE_BATCH = 1_000;

/** Per reason: the batch's count (`count(*) FILTER … AS other_mode`), then its sum into `pruned_other_mode`. */
const SET_ASIDE_TALLIES = SET_ASIDE_REASONS.map(
  (reason) => `count(*) FILTER (WHERE ignored_reason = '${reason}') AS ${reason}`,
).join(', ');
const SET_ASIDE_ADDED = SET_ASIDE_REASONS.map(
  (reason) => `pruned_${reason} = c.pruned_${reason} + tally.${reason}`,
).join(', ');

/**
 * One batch of one connection, one statement: claim its oldest finished events past the
 * cutoff (older than its newest event), delete them, and add them to its counts. Found through
 * processor_events_received_idx (connection, received time).
 */
const PRUNE_BATCH = `
  WITH doomed AS (
    SELECT id FROM processor_events
     WHERE connection_id = :connection
       AND received_at < :cutoff
       AND received_at < (SELECT max(received_at) FROM processor_events WHERE connection_id = :connection)
       AND state IN ('applied', 'ignored')
     ORDER BY received_at
     LIMIT :limit
       FOR UPDATE SKIP LOCKED
  ), deleted AS (
    DELETE FROM processor_events WHERE id IN (SELECT id FROM doomed)
    RETURNING ignored_reason
  ), tally AS (
    SELECT count(*) AS events, ${SET_ASIDE_TALLIES} FROM deleted
  ), counted AS (
    UPDATE processor_connections c
       SET pruned_events = c.pruned_events + tally.events, ${SET_ASIDE_ADDED}
      FROM tally
     WHERE c.id = :connection AND tally.events > 0
    RETURNING tally.events
  )
  SELECT coalesce((SELECT events FROM counted), 0)::int AS deleted`;

export async function pruneProcessorEvents(
  db: Db,
  options: { olderThanDays: number; batchSize?: number },
): Promise<ProcessorEventsPruneResult> {
  const limit = options.batchSize ?? DEFAULT_PROCESSOR_EVENTS_PRUNE_BATCH;
  const cutoff = await retentionCutoff(db, options.olderThanDays);
  const connections = (await db('processor_connections').orderBy('id').pluck('id')) as string[];
  let events = 0;
  for (const connection of connections) {
    events += await deleteInBatches(
      limit,
      async () =>
        (await db.raw<{ rows: Array<{ deleted: number }> }>(PRUNE_BATCH, { connection, cutoff, limit })).rows[0]!
          .deleted,
    );
  }
  return { events };
}
