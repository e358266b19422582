import { buildEventData, toIsoMillis, type EventData, type EventType } from '@retention/core';
import type { Transaction } from '@retention/db';

/**
 * The event outbox. Every domain action writes its change and its event row through
 * `recordEvent` in one transaction, so webhook dispatch can never miss an event nor see one
 * whose change was rolled back. A trigger on `events` (migration 0018) puts each new event in
 * `event_outbox`, the dispatcher's queue, and raises the NOTIFY below, in that transaction.
 */

/**
 * Postgres NOTIFY channel raised for every statement that records events (by the trigger,
 * which names it too). A NOTIFY is delivered only when its transaction commits, so a listener
 * never wakes for an event that does not exist; the payload is empty because listeners read
 * the table, which is the truth.
 */
export const OUTBOX_CHANNEL = 'retention_outbox';

export interface OutboxEvent<T extends EventType = EventType> {
  id: string;
  seq: number;
  workspace_id: string;
  type: T;
  data: EventData<T>;
  created_at: string;
}

interface EventRow {
  id: string;
  seq: number;
  workspace_id: string;
  type: EventType;
  data: unknown;
  created_at: Date;
}

export function toOutboxEvent(row: EventRow): OutboxEvent {
  return {
    id: row.id,
    seq: row.seq,
    workspace_id: row.workspace_id,
    type: row.type,
    data: row.data as EventData,
    created_at: toIsoMillis(row.created_at),
  };
}

/** One event to append: the workspace it belongs to, its type, and its `data`. */
export interface NewEvent<T extends EventType = EventType> {
  workspaceId: string;
  type: T;
  data: EventData<T>;
  /**
   * When it happened, for a replay of history (the demo seed, `replayedAt`); the database's
   * now when omitted.
   */
  at?: Date;
}

/**
 * Appends events in one multi-row insert, in the given order (their `seq` follows it); the
 * trigger enqueues them and raises a single NOTIFY. Takes a transaction, not the pool: an
 * event written outside the transaction of its change could outlive a rollback. Every `data`
 * goes through the core catalog, which throws on any key or type that the event catalog
 * (docs/webhooks.md, "Event types") does not allow, before anything is written.
 */
export async function recordEvents(trx: Transaction, events: readonly NewEvent[]): Promise<OutboxEvent[]> {
  if (events.length === 0) return [];
  const rows = events.map(({ workspaceId, type, data, at }) => ({
    workspace_id: workspaceId,
    type,
    data: JSON.stringify(buildEventData(type, data)),
    ...(at !== undefined && { created_at: at }),
  }));
  const inserted = await trx<EventRow>('events')
    .insert(rows)
    .returning(['id', 'seq', 'workspace_id', 'type', 'data', 'created_at']);
  // RETURNING carries no order guarantee; seq (an identity) follows the VALUES order.
  return (inserted as EventRow[]).sort((a, b) => a.seq - b.seq).map(toOutboxEvent);
}

/** Appends one event; see `recordEvents`. */
export async function recordEvent<T extends EventType>(
  trx: Transaction,
  workspaceId: string,
  type: T,
  data: EventData<T>,
  at?: Date,
): Promise<OutboxEvent<T>> {
  const [event] = await recordEvents(trx, [{ workspaceId, type, data, ...(at !== undefined && { at }) }]);
  return event as OutboxEvent<T>;
}
