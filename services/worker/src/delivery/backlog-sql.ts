import { NOW_MS_SQL } from '@retention/db';

/**
 * SQL shared by the statements that take deliveries out of the backlog (see
 * docs/delivery-scheduler.md): the scheduler's release and a job going on with its endpoint's
 * next delivery pick the same ones, in the same order.
 */

/**
 * A `CROSS JOIN LATERAL` giving, as `d (id, attempt_started_at, lease_expires_at)`, the
 * `limit` oldest due deliveries in the backlog of the endpoint `endpointId` (SQL expressions):
 * due first, and among those due at the same instant (one dispatch batch) the events' order in
 * the outbox; none whose attempt is in flight; locked, and skipped when another release holds
 * them. `except`: a condition on `d` that rules more out.
 */
export function oldestDueInBacklog(endpointId: string, limit: string, except = 'false'): string {
  return `
  CROSS JOIN LATERAL (
        SELECT id, attempt_started_at, lease_expires_at FROM webhook_deliveries d
         WHERE d.endpoint_id = ${endpointId} AND d.status = 'pending' AND d.queued_at IS NULL
           AND d.next_attempt_at <= ${NOW_MS_SQL}
           AND (d.lease_expires_at IS NULL OR d.lease_expires_at <= now())
           AND NOT (${except})
         ORDER BY d.next_attempt_at, d.event_seq, d.id
         LIMIT ${limit}
           FOR NO KEY UPDATE SKIP LOCKED) d`;
}
