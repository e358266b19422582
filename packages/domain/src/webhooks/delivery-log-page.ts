import {
  ATTEMPT_OUTCOMES,
  EVENT_TYPES,
  invalidField,
  isOneOf,
  PING_EVENT_TYPE,
  serializeWebhookPayload,
  toIsoMillis,
  toIsoMillisOrNull,
} from '@retention/core';
import { newestFirst, opaqueKeysetPage, type Queryable } from '@retention/db';
import { attemptColumns, toDeliveryLogEntry, type AttemptRow, type DeliveryLogEntry } from './delivery-log.js';

/**
 * The dashboard's delivery log of one endpoint: newest first, filtered by outcome and event
 * type, in opaque keyset pages, each entry with the JSON that was signed (rebuilt from the
 * event, byte for byte what the worker sends). A Send test's ping has no stored event: its
 * `request_body` is null.
 */
export interface DeliveryLogPageEntry extends DeliveryLogEntry {
  request_body: string | null;
  /**
   * When the delivery's next attempt (this one's number + 1) was made, whatever made it: the
   * worker's retry on schedule, the worker after Retry failed since… queued the delivery again, or
   * a Resend (an attempt does not record which); null while none is made (a skipped retry is not
   * one). `next_attempt_at` is the time the retry was given, kept for good: without this, the log
   * could not tell a retry long made from one overdue.
   */
  retried_at: string | null;
}

/** The `retried_at` of the line `a`: (delivery_id, attempt) is unique, so one row at most. */
const RETRIED_AT_SQL = `(SELECT r.attempted_at FROM webhook_attempts r
    WHERE r.delivery_id = a.delivery_id AND r.attempt = a.attempt + 1 AND r.outcome <> 'skipped') AS retried_at`;

interface PageRow extends AttemptRow {
  retried_at: Date | null;
  event_data: unknown;
  event_created_at: Date | null;
  [column: string]: unknown;
}

export const DELIVERY_LOG_PAGE_SIZE = 50;

export async function listDeliveryLogPage(
  db: Queryable,
  endpointId: string,
  options: { outcome?: string; event_type?: string; cursor?: string; limit?: number } = {},
): Promise<{ data: DeliveryLogPageEntry[]; has_more: boolean; next_cursor: string | null }> {
  if (options.outcome !== undefined && !isOneOf(ATTEMPT_OUTCOMES, options.outcome)) {
    throw invalidField('outcome', `must be one of ${ATTEMPT_OUTCOMES.join(', ')}`);
  }
  const types = [...EVENT_TYPES, PING_EVENT_TYPE] as string[];
  if (options.event_type !== undefined && !types.includes(options.event_type)) {
    throw invalidField('event_type', `must be one of ${types.join(', ')}`);
  }
  const query = db('webhook_attempts as a')
    .join('webhook_deliveries as d', 'd.id', 'a.delivery_id')
    .leftJoin('events as e', 'e.id', 'd.event_id')
    .where('a.endpoint_id', endpointId)
    .select(...attemptColumns(db), db.raw(RETRIED_AT_SQL), 'e.data as event_data', 'e.created_at as event_created_at');
  if (options.outcome !== undefined) query.where('a.outcome', options.outcome);
  if (options.event_type !== undefined) query.where('a.event_type', options.event_type);
  const page = await opaqueKeysetPage<PageRow>(query, {
    order: newestFirst('a.attempted_at'),
    idColumn: 'a.id',
    cursor: options.cursor,
    limit: options.limit ?? DELIVERY_LOG_PAGE_SIZE,
  });
  return {
    data: page.rows.map((row) => ({
      ...toDeliveryLogEntry(row),
      request_body:
        row.event_created_at && row.event_data
          ? serializeWebhookPayload(row.event_type, toIsoMillis(row.event_created_at), row.event_data)
          : null,
      retried_at: toIsoMillisOrNull(row.retried_at),
    })),
    has_more: page.hasMore,
    next_cursor: page.nextCursor,
  };
}
