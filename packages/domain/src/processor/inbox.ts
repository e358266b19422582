import { ServiceError } from '@retention/core';
import { inTransaction, type Db, type Transaction } from '@retention/db';
import { recordSecurityEvent } from '../security-log.js';
import { PROCESSOR_ACTOR, type ConnectionRow } from './connections.js';

/**
 * The processor's events as received: the inbox. Postgres is the truth, as for our own
 * outbox: an event is stored once per (connection, processor event id) and answered at once;
 * the worker claims it with a row lock, applies it and marks it applied in one transaction, so
 * a worker killed mid-apply leaves it pending (the lock dies with the connection) and another
 * claim applies it exactly once. A failed apply is retried with back-off, then parked.
 */

/** Postgres NOTIFY channel raised for each stored event, so the worker applies it at once. */
export const PROCESSOR_EVENTS_CHANNEL = 'retention_processor_events';

export interface IncomingProcessorEvent {
  psp_event_id: string;
  type: string;
  /** The processor's creation time of the event. */
  created: Date;
  payload: Record<string, unknown>;
}

/**
 * Stores a verified event; `stored: false` for a redelivery (already stored). The first event
 * of a key-less (`pending`) connection proves the signing secret, and connects it.
 */
export async function storeProcessorEvent(
  db: Db,
  connection: ConnectionRow,
  event: IncomingProcessorEvent,
): Promise<{ stored: boolean }> {
  return inTransaction(db, async (trx) => {
    const inserted = await trx('processor_events')
      .insert({
        connection_id: connection.id,
        workspace_id: connection.workspace_id,
        psp_event_id: event.psp_event_id,
        type: event.type,
        psp_created_at: event.created,
        payload: JSON.stringify(event.payload),
      })
      .onConflict(['connection_id', 'psp_event_id'])
      .ignore()
      .returning('id');
    if (inserted.length === 0) return { stored: false };
    const [updated]: Array<{ status: string }> = await trx('processor_connections')
      .where({ id: connection.id })
      .update({
        events_received: trx.raw('events_received + 1'),
        last_event_at: trx.fn.now(),
        status: trx.raw("CASE WHEN status = 'pending' THEN 'connected' ELSE status END"),
        connected_at: trx.raw("CASE WHEN status = 'pending' THEN now() ELSE connected_at END"),
        updated_at: trx.fn.now(),
      })
      .returning(['status']);
    if (connection.status === 'pending' && updated?.status === 'connected') {
      await trx('workspaces')
        .where({ id: connection.workspace_id })
        .update({ processor_status: 'connected', updated_at: trx.fn.now() });
      await recordSecurityEvent(trx, {
        workspace_id: connection.workspace_id,
        action: 'processor.connected',
        actor: PROCESSOR_ACTOR,
        target: { type: 'processor_connection', id: connection.id, label: connection.provider },
        details: { provider: connection.provider, status: 'connected', proof: 'first signed event' },
      });
    }
    await trx.raw('SELECT pg_notify(?, ?)', [PROCESSOR_EVENTS_CHANNEL, '']);
    return { stored: true };
  });
}

export interface ClaimedProcessorEvent {
  id: string;
  connection_id: string;
  workspace_id: string;
  psp_event_id: string;
  type: string;
  psp_created_at: Date;
  payload: Record<string, unknown>;
  attempts: number;
}

export type ApplyOutcome = 'applied' | 'ignored';

/** After this many failed attempts an event is parked (kept, shown in `processor status`, not retried). */
export const MAX_APPLY_ATTEMPTS = 6;

/** Back-off after the n-th failed attempt: 2 s, 4 s, 8 s … at most 5 minutes. */
export function applyBackoffMs(failedAttempts: number): number {
  return Math.min(300_000, 1_000 * 2 ** failedAttempts);
}

/**
 * Claims the oldest due event (by the processor's `created`) that no other worker holds, and
 * runs `apply` in the same transaction; the event is marked applied (or ignored) in that
 * transaction. Returns null when nothing is due. A thrown error rolls the apply back; the
 * failure is then recorded on its own (retry with back-off, or parked), and returned.
 */
export async function applyNextProcessorEvent(
  db: Db,
  apply: (trx: Transaction, event: ClaimedProcessorEvent) => Promise<ApplyOutcome>,
  options: { connectionId?: string } = {},
): Promise<{ event: ClaimedProcessorEvent; outcome: ApplyOutcome | 'failed' | 'parked'; error?: unknown } | null> {
  let claimed: ClaimedProcessorEvent | undefined;
  try {
    return await db.transaction(async (trx) => {
      const query = trx('processor_events')
        .where({ state: 'pending' })
        .where('next_attempt_at', '<=', trx.fn.now())
        .orderBy([{ column: 'psp_created_at' }, { column: 'received_at' }])
        .forUpdate()
        .skipLocked()
        .limit(1)
        .select('id', 'connection_id', 'workspace_id', 'psp_event_id', 'type', 'psp_created_at', 'payload', 'attempts');
      if (options.connectionId !== undefined) query.where({ connection_id: options.connectionId });
      claimed = (await query.first()) as ClaimedProcessorEvent | undefined;
      if (!claimed) return null;
      const outcome = await apply(trx, claimed);
      await trx('processor_events')
        .where({ id: claimed.id })
        .update({ state: outcome, applied_at: trx.fn.now(), attempts: claimed.attempts + 1, last_error: null });
      return { event: claimed, outcome };
    });
  } catch (error) {
    if (!claimed) throw error;
    const outcome = await recordApplyFailure(db, claimed, error);
    return { event: claimed, outcome, error };
  }
}

/** Errors that say the event itself can never apply (a refused value, an illegal transition): no retry helps. */
function isPermanent(error: unknown): boolean {
  return error instanceof ServiceError && (error.type === 'invalid_param' || error.type === 'conflict');
}

async function recordApplyFailure(db: Db, event: ClaimedProcessorEvent, error: unknown): Promise<'failed' | 'parked'> {
  const attempts = event.attempts + 1;
  const park = attempts >= MAX_APPLY_ATTEMPTS || isPermanent(error);
  const message = (error instanceof Error ? `${error.name}: ${error.message}` : String(error)).slice(0, 2000);
  await inTransaction(db, (trx) =>
    trx('processor_events')
      .where({ id: event.id, state: 'pending' })
      .update({
        attempts,
        last_error: message,
        ...(park
          ? { state: 'parked' }
          : { next_attempt_at: trx.raw(`now() + (? * interval '1 millisecond')`, [applyBackoffMs(attempts)]) }),
      }),
  );
  return park ? 'parked' : 'failed';
}
