import { ServiceError, type SetAsideReason } from '@retention/core';
import { databaseFailure, inTransaction, NOW_MS_SQL, type Db, type Queryable, type Transaction } from '@retention/db';
import { recordSecurityEvent } from '../security-log.js';
import { PROCESSOR_ACTOR, type ConnectionRow } from './connections.js';

/**
 * The processor's events as received: the inbox. Postgres is the truth, as for our own
 * outbox: an event is stored once per (connection, processor event id) and answered at once;
 * the worker claims it with a row lock, applies it and marks it applied in one transaction, so
 * a worker killed mid-apply leaves it pending (the lock dies with the connection) and another
 * claim applies it exactly once. A failed apply is retried with back-off, then parked.
 */

/**
 * Postgres NOTIFY channel raised for each stored event, so the worker applies it at once; the
 * payload is the event's connection id (a worker already applying that connection need not
 * look for it).
 */
export const PROCESSOR_EVENTS_CHANNEL = 'retention_processor_events';

export interface IncomingProcessorEvent {
  psp_event_id: string;
  type: string;
  /** The processor's creation time of the event. */
  created: Date;
  payload: Record<string, unknown>;
  /**
   * The payload exactly as received and verified (the signed JSON text), stored as it is
   * rather than serialised again from `payload` (a `json` column keeps the text as it is).
   */
  payload_text?: string;
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
  // A pending connection is connected in the transaction that stores its first event, so the
  // events that event leads to are dispatched under `connected`. Every other event is one
  // statement committed on its own.
  if (connection.status === 'pending') {
    return inTransaction(db, async (trx) => {
      const stored = await insertEvent(trx, connection, event);
      if (stored) await connectOnFirstEvent(trx, connection);
      return { stored };
    });
  }
  return { stored: await insertEvent(db, connection, event) };
}

/** One event: stored or not (already stored). */
async function insertEvent(db: Queryable, connection: ConnectionRow, event: IncomingProcessorEvent): Promise<boolean> {
  const [stored] = await storeProcessorEvents(db, [{ connection, event }]);
  return stored!;
}

/**
 * Stores events of connected connections received together (the API groups the requests of
 * one turn of its event loop, as a database groups commits): one statement, one commit for the
 * lot under a burst. Each result says whether that event was new; an event twice in the batch
 * is new once. A pending connection's events go through storeProcessorEvent.
 *
 * The insert and the NOTIFY that wakes the worker are one statement: `pg_notify` runs for each
 * inserted row, and Postgres delivers identical notifications of one transaction once, at
 * commit (one per connection of the batch: the payload is the connection id). Nothing else is written per event: a counter on the connection would make every
 * accepted event queue for one row lock.
 *
 * A redelivery of a parked event (Stripe's "Resend" on the event) re-arms it for a new round
 * of attempts and counts as new (a retry is what the owner asked Stripe for); a redelivery of
 * an event applied, ignored or still pending changes nothing.
 */
export async function storeProcessorEvents(
  db: Queryable,
  items: ReadonlyArray<{ connection: ConnectionRow; event: IncomingProcessorEvent }>,
): Promise<boolean[]> {
  const keyOf = (item: (typeof items)[number]) => `${item.connection.id}/${item.event.psp_event_id}`;
  // Each event once in the statement: ON CONFLICT DO UPDATE refuses a row proposed twice.
  const distinct = [...new Map(items.map((item) => [keyOf(item), item])).values()];
  const values = distinct.map(() => '(?, ?, ?, ?, ?, ?::json)').join(', ');
  const bindings = distinct.flatMap(({ connection, event }) => [
    connection.id,
    connection.workspace_id,
    event.psp_event_id,
    event.type,
    event.created,
    event.payload_text ?? JSON.stringify(event.payload),
  ]);
  const { rows } = await db.raw<{ rows: Array<{ connection_id: string; psp_event_id: string }> }>(
    `INSERT INTO processor_events (connection_id, workspace_id, psp_event_id, type, psp_created_at, payload)
     VALUES ${values}
     ON CONFLICT (connection_id, psp_event_id) DO UPDATE
       SET ${REARM_PARKED}
       WHERE processor_events.state = 'parked'
     RETURNING connection_id, psp_event_id, pg_notify(?, connection_id::text)`,
    [...bindings, PROCESSOR_EVENTS_CHANNEL],
  );
  const fresh = new Set(rows.map((row) => `${row.connection_id}/${row.psp_event_id}`));
  return items.map((item) => fresh.delete(keyOf(item)));
}

/**
 * The columns that give a parked event a new round of attempts, due now. Its last error is kept
 * until an attempt replaces it, so the status still says what went wrong meanwhile.
 */
const REARM_PARKED = `state = 'pending', attempts = 0, next_attempt_at = now()`;

/**
 * Parked events of a connection re-armed for a new round of attempts, due now (the operator's
 * `processor retry`, the dashboard's retry): all of them, or the one Stripe event named. Wakes
 * the worker. Returns the Stripe ids of the events re-armed.
 */
export async function rearmParkedEvents(
  trx: Transaction,
  connectionId: string,
  pspEventId?: string,
): Promise<string[]> {
  const { rows } = await trx.raw<{ rows: Array<{ psp_event_id: string }> }>(
    `UPDATE processor_events SET ${REARM_PARKED}
      WHERE connection_id = ? AND state = 'parked' ${pspEventId === undefined ? '' : 'AND psp_event_id = ?'}
      RETURNING psp_event_id, pg_notify(?, connection_id::text)`,
    [connectionId, ...(pspEventId === undefined ? [] : [pspEventId]), PROCESSOR_EVENTS_CHANNEL],
  );
  return rows.map((row) => row.psp_event_id);
}

/** The first correctly signed event proves the signing secret: a key-less connection is connected. */
async function connectOnFirstEvent(trx: Transaction, connection: ConnectionRow): Promise<void> {
  const updated = await trx('processor_connections')
    .where({ id: connection.id, status: 'pending' })
    .update({ status: 'connected', connected_at: trx.fn.now(), updated_at: trx.fn.now() });
  if (updated === 0) return; // another request's event got there first
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

/** Applied; ignored (a type we do not handle, nothing to do); or set aside, ignored for a reason kept with it. */
export type ApplyOutcome = 'applied' | 'ignored' | { set_aside: SetAsideReason };

/** After this many failed attempts an event is parked (kept, shown in `processor status`, not retried). */
export const MAX_APPLY_ATTEMPTS = 6;

/** Back-off after the n-th failed attempt: 2 s, 4 s, 8 s … at most 5 minutes. */
export function applyBackoffMs(failedAttempts: number): number {
  return Math.min(300_000, 1_000 * 2 ** failedAttempts);
}

/** Due now (see NOW_MS_SQL: the column rounds to the millisecond). */
const DUE = `next_attempt_at <= ${NOW_MS_SQL}`;

/**
 * The connection of the oldest due event that no other worker is applying, locked (advisory,
 * until this transaction ends): one batch per connection at a time, so a connection's events
 * are applied in order of Stripe's `created`, and batches of different connections never
 * touch the same rows (no lock waits, no deadlocks between them).
 */
async function lockDueConnection(trx: Transaction): Promise<string | null> {
  const busy: string[] = [];
  for (let tries = 0; tries < 10; tries += 1) {
    const query = trx('processor_events')
      .where({ state: 'pending' })
      .whereRaw(DUE)
      .orderBy('next_attempt_at')
      .first<{ connection_id: string } | undefined>('connection_id');
    if (busy.length > 0) query.whereNotIn('connection_id', busy);
    const due = await query;
    if (!due) return null;
    const {
      rows: [lock],
    } = await trx.raw<{ rows: Array<{ locked: boolean }> }>(
      "SELECT pg_try_advisory_xact_lock(hashtext('processor_events:' || ?)) AS locked",
      [due.connection_id],
    );
    if (lock?.locked) return due.connection_id;
    busy.push(due.connection_id);
  }
  return null;
}

export interface AppliedProcessorEvent {
  event: ClaimedProcessorEvent;
  outcome: ApplyOutcome | 'failed' | 'parked';
  error?: unknown;
}

/** Events claimed and committed together unless the caller says otherwise. */
export const DEFAULT_APPLY_BATCH_SIZE = 100;

/**
 * Claims up to `batchSize` due events of one connection (oldest Stripe `created` first; see
 * lockDueConnection), applies them in that order in one transaction, marks them applied (or
 * ignored) there, and commits the batch once: a worker that dies before the commit leaves
 * every event of the batch pending. Returns nothing when nothing is due.
 *
 * The events run together in one savepoint and are marked in one statement (a savepoint of
 * each event's own would cost two round trips per event). When one throws, that savepoint is
 * rolled back, the events before it are applied again in a savepoint of their own, the
 * failure is recorded against that event alone (retry with back-off, or parked) and the
 * events after it go on the same way: a poison event never takes the others with it. The
 * events before a failure are thus run twice in that attempt (the first run rolled back), so
 * their Stripe lookups are made twice; each is committed once.
 */
export async function applyProcessorEvents(
  db: Db,
  apply: (trx: Transaction, event: ClaimedProcessorEvent) => Promise<ApplyOutcome>,
  options: {
    batchSize?: number;
    /** Called once this batch holds its connection (before its events are claimed). */
    onLocked?: (connectionId: string) => void;
  } = {},
): Promise<AppliedProcessorEvent[]> {
  return db.transaction(async (trx) => {
    const connectionId = await lockDueConnection(trx);
    if (connectionId === null) return [];
    options.onLocked?.(connectionId);
    const claimed: ClaimedProcessorEvent[] = await trx('processor_events')
      .where({ state: 'pending', connection_id: connectionId })
      .whereRaw(DUE)
      .orderBy([{ column: 'psp_created_at' }, { column: 'received_at' }])
      .forUpdate()
      .skipLocked()
      .limit(options.batchSize ?? DEFAULT_APPLY_BATCH_SIZE)
      .select('id', 'connection_id', 'workspace_id', 'psp_event_id', 'type', 'psp_created_at', 'payload', 'attempts');
    const results: AppliedProcessorEvent[] = [];
    // Applies claimed[from..to) in one savepoint; on a failure, splits around the failing event.
    const applyRun = async (from: number, to: number): Promise<void> => {
      if (from >= to) return;
      let failedAt = -1;
      let failure: unknown;
      try {
        const outcomes = await trx.transaction(async (savepoint) => {
          const run: ApplyOutcome[] = [];
          for (let index = from; index < to; index += 1) {
            try {
              run.push(await apply(savepoint, claimed[index]!));
            } catch (error) {
              [failedAt, failure] = [index, error];
              throw error;
            }
          }
          await markApplied(savepoint, claimed.slice(from, to), run);
          return run;
        });
        outcomes.forEach((outcome, offset) => results.push({ event: claimed[from + offset]!, outcome }));
      } catch (error) {
        if (failedAt < 0) throw error; // not an event's own failure (marking them): the batch fails
        await applyRun(from, failedAt);
        const event = claimed[failedAt]!;
        results.push({ event, outcome: await recordApplyFailure(trx, event, failure), error: failure });
        await applyRun(failedAt + 1, to);
      }
    };
    await applyRun(0, claimed.length);
    return results;
  });
}

/** Marks applied events `applied` or `ignored` (with the reason of one set aside), one statement for the lot. */
async function markApplied(
  trx: Transaction,
  events: ReadonlyArray<ClaimedProcessorEvent>,
  outcomes: ReadonlyArray<ApplyOutcome>,
): Promise<void> {
  if (events.length === 0) return;
  await trx.raw(
    `UPDATE processor_events AS e
        SET state = v.state, ignored_reason = v.reason, applied_at = now(), attempts = e.attempts + 1,
            last_error = NULL
       FROM unnest(?::uuid[], ?::text[], ?::text[]) AS v(id, state, reason)
      WHERE e.id = v.id`,
    [
      events.map((event) => event.id),
      outcomes.map((outcome) => (typeof outcome === 'string' ? outcome : 'ignored')),
      // Nulls in a text array: knex's binding types know only arrays of one primitive type.
      outcomes.map((outcome) => (typeof outcome === 'string' ? null : outcome.set_aside)) as unknown as string[],
    ],
  );
}

/** Errors that say the event itself can never apply (a refused value, an illegal transition): no retry helps. */
function isPermanent(error: unknown): boolean {
  return error instanceof ServiceError && (error.type === 'invalid_param' || error.type === 'conflict');
}

/**
 * What `last_error` says, which the workspace's owner reads (processor status, the dashboard):
 * a database failure in the database's own words and SQLSTATE, never our query text (the full
 * error goes to the worker's log, for the operator); our own errors as they are.
 */
function applyFailureMessage(error: unknown): string {
  const failure = databaseFailure(error);
  if (failure) {
    // Class 22 (data exception) and 23 (integrity constraint): a value in the event.
    const what = /^2[23]/.test(failure.code)
      ? 'The database refused a value in this event'
      : 'The database failed while applying this event';
    return `${what}${failure.message ? `: ${failure.message}` : ''} (SQLSTATE ${failure.code})`;
  }
  // The message alone: an error's class name (`ServiceError:`, `StripePermissionError:`) means
  // nothing to the owner, and the worker's log keeps the whole error.
  return error instanceof Error ? error.message : String(error);
}

async function recordApplyFailure(
  trx: Transaction,
  event: ClaimedProcessorEvent,
  error: unknown,
): Promise<'failed' | 'parked'> {
  const attempts = event.attempts + 1;
  const park = attempts >= MAX_APPLY_ATTEMPTS || isPermanent(error);
  const message = applyFailureMessage(error).slice(0, 2000);
  await trx('processor_events')
    .where({ id: event.id })
    .update({
      attempts,
      last_error: message,
      ...(park
        ? { state: 'parked' }
        : { next_attempt_at: trx.raw(`now() + (? * interval '1 millisecond')`, [applyBackoffMs(attempts)]) }),
    });
  return park ? 'parked' : 'failed';
}
