import type { Transaction } from '@retention/db';

/** The log line of an attempt whose worker died before it could record a result. */
export const INTERRUPTED_ATTEMPT_ERROR =
  'interrupted: the worker stopped during this attempt; the receiver may or may not have received it';

/**
 * Ends every pending delivery of an endpoint that was just disabled, by hand or by 10
 * failures in a row: each gets a `skipped` line in the log, so the owner sees which events
 * were never delivered. The line takes the delivery's next attempt number, and the delivery
 * counts it (`attempt_count`): recovered later ("Retry failed since…"), its next real attempt
 * is numbered after it, where it would otherwise collide with the line in the log's
 * (delivery, attempt) key, go unrecorded and be sent again when its lease ran out. An attempt in flight (its lease still running) is left to finish and
 * record its own result. `onlyDeliveryId` narrows it to one delivery of that endpoint;
 * `keepEventTypes` (non-empty) spares the deliveries of those types (a narrowed subscription).
 */
export async function skipPendingDeliveries(
  trx: Transaction,
  endpointId: string,
  reason: string,
  onlyDeliveryId?: string,
  keepEventTypes?: string[],
): Promise<number> {
  const result = await trx.raw<{ rowCount: number | null }>(
    `
    WITH target AS (
      SELECT id, attempt_started_at, lease_expires_at
        FROM webhook_deliveries
       WHERE endpoint_id = ? AND status = 'pending'
         AND (?::uuid IS NULL OR id = ?::uuid)
         AND (cardinality(?::text[]) = 0 OR event_type <> ALL (?::text[]))
         AND (lease_expires_at IS NULL OR lease_expires_at <= now())
         FOR NO KEY UPDATE
    ), skipped AS (
      UPDATE webhook_deliveries d
         SET status = 'skipped', attempt_count = d.attempt_count + 1, next_attempt_at = NULL,
             attempt_started_at = NULL, lease_expires_at = NULL, queued_at = NULL, completed_at = now()
        FROM target t
       WHERE d.id = t.id
      RETURNING d.id, d.endpoint_id, d.event_type, d.attempt_count AS skipped_attempt,
                t.attempt_started_at AS interrupted_at
    ), endpoint AS (
      SELECT url FROM webhook_endpoints WHERE id = ?
    ), interrupted AS (
      INSERT INTO webhook_attempts (delivery_id, endpoint_id, event_type, attempt, outcome, error, duration_ms,
                                    attempted_at, url)
      SELECT id, endpoint_id, event_type, skipped_attempt - 1, 'interrupted', ?, 0, interrupted_at, endpoint.url
        FROM skipped, endpoint WHERE interrupted_at IS NOT NULL
      ON CONFLICT (delivery_id, attempt) DO NOTHING
    )
    INSERT INTO webhook_attempts (delivery_id, endpoint_id, event_type, attempt, outcome, error, duration_ms,
                                  attempted_at, url)
    SELECT id, endpoint_id, event_type, skipped_attempt, 'skipped', ?, 0, now(), endpoint.url FROM skipped, endpoint
    `,
    [
      endpointId,
      onlyDeliveryId ?? null,
      onlyDeliveryId ?? null,
      keepEventTypes ?? [],
      keepEventTypes ?? [],
      endpointId,
      INTERRUPTED_ATTEMPT_ERROR,
      `skipped: ${reason}`,
    ],
  );
  return result.rowCount ?? 0;
}
