import { Type } from '@sinclair/typebox';
import { toIsoMillis, toIsoMillisOrNull, type AttemptOutcome } from '@retention/core';
import type { Queryable } from '@retention/db';
import { inputValidator } from '../validate.js';
import { findEndpointRow } from './endpoints.js';

/**
 * One line of the delivery log (docs/webhooks.md, "When your receiver fails"; decisions.md): an
 * attempt, a skipped retry or an interrupted attempt.
 */
export interface DeliveryLogEntry {
  id: string;
  object: 'webhook_attempt';
  delivery_id: string;
  /** null for a Send test (`ping`), which has no event. */
  event_id: string | null;
  event_type: string;
  /** 1-based. */
  attempt: number;
  outcome: AttemptOutcome;
  /** null on a timeout, a connection error, a refused address, a skip or an interruption. */
  http_status: number | null;
  /** null on success. */
  error: string | null;
  /** The first 4096 bytes of the receiver's answer, as text. */
  response_body: string | null;
  duration_ms: number;
  attempted_at: string;
  /** When the next attempt is due; null when none will follow. */
  next_attempt_at: string | null;
  /**
   * The URL the attempt was sent to, which the endpoint's URL may no longer be; for a skipped
   * or interrupted line, the endpoint's URL at that time. Null when nobody recorded it: a line
   * logged before migration 0033, or by the previous release during a rolling deploy.
   */
  url: string | null;
}

export interface AttemptRow {
  id: string;
  delivery_id: string;
  event_id: string | null;
  event_type: string;
  attempt: number;
  outcome: AttemptOutcome;
  http_status: number | null;
  error: string | null;
  response_body: string | null;
  duration_ms: number;
  attempted_at: Date;
  next_attempt_at: Date | null;
  url: string | null;
}

export function toDeliveryLogEntry(row: AttemptRow): DeliveryLogEntry {
  return {
    id: row.id,
    object: 'webhook_attempt',
    delivery_id: row.delivery_id,
    event_id: row.event_id,
    event_type: row.event_type,
    attempt: row.attempt,
    outcome: row.outcome,
    http_status: row.http_status,
    error: row.error,
    response_body: row.response_body,
    duration_ms: row.duration_ms,
    attempted_at: toIsoMillis(row.attempted_at),
    next_attempt_at: toIsoMillisOrNull(row.next_attempt_at),
    url: row.url,
  };
}

/**
 * When the line's next attempt is due, as stored with the line, except when that retry was
 * skipped (the endpoint was turned off, by hand or by its failures, or no longer subscribes):
 * the skip takes the next attempt number, and the retry it skipped will not happen, so the line
 * says no next attempt (it used to keep showing the time of the retry that never came).
 */
const NEXT_ATTEMPT_SQL = `CASE WHEN a.next_attempt_at IS NOT NULL AND EXISTS (
    SELECT 1 FROM webhook_attempts s
     WHERE s.delivery_id = a.delivery_id AND s.attempt = a.attempt + 1 AND s.outcome = 'skipped')
  THEN NULL ELSE a.next_attempt_at END AS next_attempt_at`;

/** The columns of an AttemptRow, from `webhook_attempts as a` joined to `webhook_deliveries as d`. */
export function attemptColumns(db: Queryable) {
  return [
    'a.id',
    'a.delivery_id',
    'd.event_id',
    'a.event_type',
    'a.attempt',
    'a.outcome',
    'a.http_status',
    'a.error',
    'a.response_body',
    'a.duration_ms',
    'a.attempted_at',
    db.raw(NEXT_ATTEMPT_SQL),
    'a.url',
  ];
}

export const DEFAULT_DELIVERY_LOG_LIMIT = 50;
export const MAX_DELIVERY_LOG_LIMIT = 1000;

const validateLimit = inputValidator(Type.Integer({ minimum: 1, maximum: MAX_DELIVERY_LOG_LIMIT }), 'limit');

/** An endpoint's delivery log, newest first. */
export async function listDeliveryLog(
  db: Queryable,
  endpointId: string,
  options: { limit?: number } = {},
): Promise<DeliveryLogEntry[]> {
  const limit = validateLimit(options.limit ?? DEFAULT_DELIVERY_LOG_LIMIT);
  await findEndpointRow(db, endpointId);
  const rows = await db('webhook_attempts as a')
    .join('webhook_deliveries as d', 'd.id', 'a.delivery_id')
    .where('a.endpoint_id', endpointId)
    .orderBy([
      { column: 'a.attempted_at', order: 'desc' },
      { column: 'a.id', order: 'desc' },
    ])
    .limit(limit)
    .select<AttemptRow[]>(...attemptColumns(db));
  return rows.map(toDeliveryLogEntry);
}
