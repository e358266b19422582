import {
  SecretOpenError,
  serializeWebhookPayload,
  toIsoMillis,
  type EventType,
  type SecretsKeyring,
} from '@retention/core';
import { inTransaction, NOW_MS_SQL, retryOnConflict, type Db, type Transaction } from '@retention/db';
import {
  AUTO_DISABLE_AFTER_FAILURES,
  INTERRUPTED_ATTEMPT_ERROR,
  openSigningSecrets,
  skipPendingDeliveries,
  type AttemptResult,
  type SealedSigningSecrets,
} from '@retention/domain';
import { Batcher } from '@retention/runtime';
import { oldestDueInBacklog } from './backlog-sql.js';
import { maxAttempts, retryDelayMs } from './retry-schedule.js';

/**
 * The delivery's state in Postgres, which is the truth and the backlog; Redis holds only the
 * jobs of deliveries released to run now (see delivery-scheduler.ts).
 *
 * An attempt is claimed before it is sent: its number is taken and a lease (the longest an
 * attempt can take, plus a margin) is set. Whoever holds an unexpired lease is the only one
 * sending that delivery. A worker killed mid-attempt leaves an expired lease behind: the next
 * claim logs that attempt as interrupted and sends again, so the receiver hears of the event
 * at least once.
 *
 * Signing secrets are read sealed with each claim and opened here, in Node, with SECRETS_KEY.
 * One that cannot be opened (a database sealed under another key) makes a delivery with no
 * secret: nothing is sent, the attempt fails and is retried per the schedule, and the
 * endpoint's failure count does not move (docs/decisions.md, "Tokens and secrets").
 */

export interface ClaimedDelivery {
  id: string;
  endpointId: string;
  eventType: EventType;
  /** The number of this attempt, 1-based. */
  attempt: number;
  url: string;
  /**
   * Two during a Roll secret overlap (new, old). Null when SECRETS_KEY cannot open them: the
   * attempt sends nothing and fails (unreadableSecretAttempt).
   */
  secret: string[] | null;
  /** The exact bytes to send and sign. */
  body: Buffer;
}

export type ClaimResult =
  | { kind: 'claimed'; delivery: ClaimedDelivery }
  /** Not due yet, or another worker's attempt is in flight: look again at `until`. */
  | { kind: 'wait'; until: Date }
  /**
   * Nothing left to do: delivered, failed for good, skipped or deleted. `skipped` when this
   * claim is what skipped it (its endpoint had been turned off).
   */
  | { kind: 'done'; skipped?: boolean };

/** The final states of a delivery. */
export type DeliveryEnd = 'succeeded' | 'failed' | 'skipped';

export interface RecordResult {
  /** False when this attempt's lease was lost to another worker: nothing was written. */
  recorded: boolean;
  nextAttemptAt: Date | null;
  endpointDisabled: boolean;
  /** How the delivery ended, when this attempt ended it. */
  ended: DeliveryEnd | null;
  /** The endpoint's other pending deliveries skipped because this attempt disabled it. */
  othersSkipped: number;
}

const NOT_RECORDED: RecordResult = {
  recorded: false,
  nextAttemptAt: null,
  endpointDisabled: false,
  ended: null,
  othersSkipped: 0,
};
const RECORDED_SUCCESS: RecordResult = { ...NOT_RECORDED, recorded: true, ended: 'succeeded' };

/** A successful attempt to record; `claims`: how many of the endpoint's next deliveries to claim for the caller too. */
interface Success {
  delivery: ClaimedDelivery;
  result: AttemptResult;
  claims: number;
}

type Nullable<T> = { [K in keyof T]: T[K] | null };

interface ClaimRow extends SealedSigningSecrets {
  id: string;
  endpoint_id: string;
  event_type: EventType;
  attempt_count: number;
  next_attempt_at: Date;
  event_seq: string | null;
  url: string;
  data: unknown;
  event_created_at: Date;
}

interface StateRow {
  status: string;
  endpoint_id: string;
  next_attempt_at: Date | null;
  lease_expires_at: Date | null;
  endpoint_enabled: boolean;
  subscribed: boolean;
  processor_connected: boolean;
  now: Date;
}

/**
 * Claims the deliveries of the CTE `previous` (locked by it) that are due, with no attempt in
 * flight, and whose endpoint may be sent to: takes the attempt's number, sets its lease, marks
 * it queued (a no-op for those released already), and logs the attempt an expired lease
 * interrupted. `SELECT_CLAIMED` then reads what each attempt sends. Bindings: the lease in ms,
 * the interrupted attempt's error.
 */
const CLAIM_PREVIOUS = `
  claimed AS (
    UPDATE webhook_deliveries d
       SET attempt_count = d.attempt_count + 1,
           attempt_started_at = now(),
           lease_expires_at = now() + ? * interval '1 millisecond',
           queued_at = coalesce(d.queued_at, now())
      FROM previous p
     WHERE d.id = p.id
       AND d.status = 'pending'
       AND d.next_attempt_at <= ${NOW_MS_SQL}
       AND (d.lease_expires_at IS NULL OR d.lease_expires_at <= now())
       AND EXISTS (
             SELECT 1 FROM webhook_endpoints e JOIN workspaces w ON w.id = e.workspace_id
              WHERE e.id = d.endpoint_id AND e.enabled AND w.processor_status = 'connected'
                AND (cardinality(e.event_types) = 0 OR d.event_type = ANY (e.event_types)))
    RETURNING d.id, d.endpoint_id, d.event_id, d.event_type, d.attempt_count, d.next_attempt_at, d.event_seq,
              p.attempt_started_at AS interrupted_at
  ), interrupted AS (
    INSERT INTO webhook_attempts (delivery_id, endpoint_id, event_type, attempt, outcome, error, duration_ms,
                                  attempted_at, url)
    SELECT c.id, c.endpoint_id, c.event_type, c.attempt_count - 1, 'interrupted', ?, 0, c.interrupted_at, e.url
      FROM claimed c JOIN webhook_endpoints e ON e.id = c.endpoint_id WHERE c.interrupted_at IS NOT NULL
    ON CONFLICT (delivery_id, attempt) DO NOTHING
  )`;

const SELECT_CLAIMED = `
  SELECT c.id, c.endpoint_id, c.event_type, c.attempt_count, c.next_attempt_at, c.event_seq, e.url,
         e.signing_secret_sealed, e.previous_signing_secret_sealed, e.previous_secret_expires_at,
         ev.data, ev.created_at AS event_created_at
    FROM claimed c
    JOIN webhook_endpoints e ON e.id = c.endpoint_id
    JOIN events ev ON ev.id = c.event_id`;

/** Deliveries claimed, or attempts recorded, in one statement at most. */
const BATCH_SIZE = 200;
/** Claim statements running at once; more claims wait and join the next batch. */
const CLAIMS_RUNNING = 4;
/**
 * Success statements running at once: one, so that the successes that arrive while it runs
 * go together in the next. Each job's spare hides that wait (its request is in flight
 * meanwhile), and fewer, larger statements cost Postgres and the driver less a delivery:
 * one endpoint's throughput was 0.41-0.50 of the baseline with four (median 0.45) and
 * 0.42-0.58 with one (median 0.53), in runs taken in turn (docs/performance.md, "One success
 * statement in flight").
 */
const SUCCESSES_RUNNING = 1;

export class DeliveryStore {
  private readonly claims: Batcher<string, ClaimRow | undefined>;
  private readonly successes: Batcher<Success, { recorded: boolean; next: ClaimRow[]; claimedAt: number }>;

  constructor(
    private readonly db: Db,
    private readonly options: { leaseMs: number; retryDelaysMs: readonly number[]; secretsKey: SecretsKeyring },
  ) {
    this.claims = new Batcher((ids) => retryOnConflict(() => this.claimBatch(ids)), {
      maxSize: BATCH_SIZE,
      maxRunning: CLAIMS_RUNNING,
    });
    this.successes = new Batcher((items) => retryOnConflict(() => this.recordSuccesses(items)), {
      maxSize: BATCH_SIZE,
      maxRunning: SUCCESSES_RUNNING,
    });
  }

  async claim(deliveryId: string): Promise<ClaimResult> {
    const row = await this.claims.submit(deliveryId);
    if (!row) return this.whyNotClaimed(deliveryId);
    return { kind: 'claimed', delivery: this.claimedDelivery(row) };
  }

  /** Claims the due ones among `ids`, in one statement; rows are locked in id order. */
  private async claimBatch(ids: string[]): Promise<Array<ClaimRow | undefined>> {
    const { rows } = await this.db.raw<{ rows: ClaimRow[] }>(
      `
      WITH previous AS (
        SELECT id, attempt_started_at, lease_expires_at
          FROM webhook_deliveries WHERE id = ANY (?::uuid[])
         ORDER BY id
           FOR NO KEY UPDATE
      ), ${CLAIM_PREVIOUS}
      ${SELECT_CLAIMED}`,
      [ids, this.options.leaseMs, INTERRUPTED_ATTEMPT_ERROR],
    );
    const byId = new Map(rows.map((row) => [row.id, row]));
    return ids.map((id) => byId.get(id));
  }

  private async whyNotClaimed(deliveryId: string): Promise<ClaimResult> {
    const { rows } = await this.db.raw<{ rows: StateRow[] }>(
      `SELECT d.status, d.endpoint_id, d.next_attempt_at, d.lease_expires_at, e.enabled AS endpoint_enabled,
              (cardinality(e.event_types) = 0 OR d.event_type = ANY (e.event_types)) AS subscribed,
              w.processor_status = 'connected' AS processor_connected, ${NOW_MS_SQL} AS now
         FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id
         JOIN workspaces w ON w.id = e.workspace_id
        WHERE d.id = ?`,
      [deliveryId],
    );
    const state = rows[0];
    if (!state || state.status !== 'pending') return { kind: 'done' };
    if (state.lease_expires_at && state.lease_expires_at > state.now)
      return { kind: 'wait', until: state.lease_expires_at };
    if (state.next_attempt_at && state.next_attempt_at > state.now)
      return { kind: 'wait', until: state.next_attempt_at };
    const reason = !state.endpoint_enabled
      ? // Dispatched while the endpoint was being turned off: it will not be sent.
        'the endpoint is disabled'
      : !state.subscribed
        ? 'the endpoint no longer subscribes to this event type'
        : !state.processor_connected
          ? "the workspace's payment processor is disconnected"
          : null;
    if (reason) {
      const skipped = await inTransaction(this.db, (trx) =>
        skipPendingDeliveries(trx, state.endpoint_id, reason, deliveryId),
      );
      return { kind: 'done', skipped: skipped > 0 };
    }
    return { kind: 'wait', until: state.now };
  }

  /**
   * Puts a released delivery back in the backlog: its job found no slot, or it is not due
   * yet (another worker's attempt is in flight). The scheduler releases it again when it is
   * due and its endpoint has room.
   */
  async giveBack(deliveryId: string): Promise<void> {
    // Not while another worker's attempt holds it: that attempt's record clears it.
    await this.db('webhook_deliveries')
      .where({ id: deliveryId, status: 'pending' })
      .whereNotNull('queued_at')
      .whereRaw('(lease_expires_at IS NULL OR lease_expires_at <= now())')
      .update({ queued_at: null });
  }

  /**
   * Writes the attempt's result, moves the delivery on and counts the endpoint's consecutive
   * failures, atomically. Says when the next attempt is due (null if none) and how the
   * delivery ended if it did.
   */
  async record(delivery: ClaimedDelivery, result: AttemptResult): Promise<RecordResult> {
    if (result.succeeded) {
      const { recorded } = await this.successes.submit({ delivery, result, claims: 0 });
      return recorded ? RECORDED_SUCCESS : NOT_RECORDED;
    }
    try {
      return await inTransaction(this.db, (trx) => this.recordFailure(trx, delivery, result));
    } catch (error) {
      if (error instanceof LeaseLost) return NOT_RECORDED;
      throw error;
    }
  }

  /**
   * Records a successful attempt and, in the same statement, releases up to `claims` of the
   * endpoint's oldest due deliveries to the caller and claims their attempts (see
   * delivery-processor.ts): marked queued, no job of their own, no trip through Redis. `next`
   * has fewer when fewer are due, or none when the endpoint may not be sent to now (the
   * scheduler's release and the claim then say why). Same order as the scheduler's releases.
   */
  async recordSuccessAndGoOn(
    delivery: ClaimedDelivery,
    result: AttemptResult,
    claims: number,
  ): Promise<{ record: RecordResult; next: ClaimedDelivery[]; claimedAt: number }> {
    const { recorded, next, claimedAt } = await this.successes.submit({ delivery, result, claims });
    return {
      record: recorded ? RECORDED_SUCCESS : NOT_RECORDED,
      next: next.map((row) => this.claimedDelivery(row)),
      claimedAt,
    };
  }

  /**
   * Undoes the claim of a delivery claimed ahead and never sent (a spare, see
   * delivery-processor.ts): its attempt number and lease go, and it goes back to the backlog,
   * as if it had never been claimed. Nothing if the lease is no longer this claim's.
   */
  async unclaim(delivery: ClaimedDelivery): Promise<void> {
    await this.db('webhook_deliveries')
      .where({ id: delivery.id, status: 'pending', attempt_count: delivery.attempt })
      .whereNotNull('lease_expires_at')
      .update({
        attempt_count: this.db.raw('attempt_count - 1'),
        attempt_started_at: null,
        lease_expires_at: null,
        queued_at: null,
      });
  }

  /**
   * The path every healthy delivery takes, so one statement for many deliveries, which also
   * claims, for each that goes on, up to its `claims` of its endpoint's next deliveries. The endpoint row is shared
   * by every delivery to it: it is written only when something changes, and last_success_at is
   * kept to the second, which spares a busy endpoint a write (and a wait on its row lock) per
   * delivery. Only an enabled endpoint's count is reset: an attempt still in flight when the
   * endpoint was disabled does not wipe the count that disabled it (see recordFailure).
   *
   * The deliveries recorded are never claimed as the next: one is recorded only while its
   * lease is held, and those being recorded are ruled out of the claim by id (a delivery given
   * back to the backlog while another worker's lease ran out could otherwise be both). Every
   * row of the result carries the ids recorded; with nothing claimed there is one row, its
   * claim columns null.
   */
  private async recordSuccesses(
    items: Success[],
  ): Promise<Array<{ recorded: boolean; next: ClaimRow[]; claimedAt: number }>> {
    // Arrays of nullable values: knex's binding types know only arrays of one primitive type.
    const column = (pick: (item: Success) => unknown) => items.map(pick) as unknown as string[];
    const wanted = new Map<string, number>();
    for (const { delivery, claims } of items) {
      if (claims > 0) wanted.set(delivery.endpointId, (wanted.get(delivery.endpointId) ?? 0) + claims);
    }
    // No later than the leases of what this statement claims start (see Spare.claimedAt).
    const claimedAt = Date.now();
    const { rows } = await this.db.raw<{ rows: Array<{ recorded_ids: string[] } & Nullable<ClaimRow>> }>(
      `
      WITH input AS (
        SELECT * FROM unnest(?::uuid[], ?::int[], ?::int[], ?::text[], ?::int[], ?::timestamptz[], ?::text[])
                   AS i (id, attempt, http_status, response_body, duration_ms, attempted_at, url)
      ), finished AS (
        UPDATE webhook_deliveries d
           SET status = 'succeeded', next_attempt_at = NULL, attempt_started_at = NULL,
               lease_expires_at = NULL, queued_at = NULL, completed_at = now()
          FROM input i
         WHERE d.id = i.id AND d.attempt_count = i.attempt AND d.lease_expires_at IS NOT NULL
        RETURNING d.id, d.endpoint_id, d.event_type, d.attempt_count
      ), logged AS (
        INSERT INTO webhook_attempts (delivery_id, endpoint_id, event_type, attempt, outcome, http_status,
                                      response_body, duration_ms, attempted_at, url)
        SELECT f.id, f.endpoint_id, f.event_type, f.attempt_count, 'succeeded', i.http_status,
               i.response_body, i.duration_ms, i.attempted_at, i.url
          FROM finished f JOIN input i ON i.id = f.id
      ), endpoints AS (
        UPDATE webhook_endpoints e
           SET failure_count = CASE WHEN e.enabled THEN 0 ELSE e.failure_count END, last_success_at = now()
         WHERE e.id IN (SELECT endpoint_id FROM finished)
           AND ((e.enabled AND e.failure_count <> 0) OR e.last_success_at IS NULL
                OR e.last_success_at < now() - interval '1 second')
      ), previous AS (
        SELECT d.id, d.attempt_started_at, d.lease_expires_at
          FROM unnest(?::uuid[], ?::int[]) AS w (endpoint_id, count)
         ${oldestDueInBacklog('w.endpoint_id', 'w.count', 'd.id IN (SELECT id FROM input)')}
      ), ${CLAIM_PREVIOUS}
      SELECT (SELECT coalesce(array_agg(id), '{}') FROM finished) AS recorded_ids, next.*
        FROM (VALUES (1)) AS one (x)
        LEFT JOIN (${SELECT_CLAIMED}) AS next ON true
      `,
      [
        column((item) => item.delivery.id),
        column((item) => item.delivery.attempt),
        column((item) => item.result.httpStatus),
        column((item) => item.result.responseBody),
        column((item) => item.result.durationMs),
        column((item) => item.result.attemptedAt),
        column((item) => item.delivery.url),
        [...wanted.keys()],
        [...wanted.values()],
        this.options.leaseMs,
        INTERRUPTED_ATTEMPT_ERROR,
      ],
    );
    const recorded = new Set(rows[0]?.recorded_ids);
    const claimed = rows.filter((row): row is typeof row & ClaimRow => row.id !== null);
    // Oldest first to the first asked (RETURNING keeps no order).
    claimed.sort(
      (a, b) =>
        a.next_attempt_at.getTime() - b.next_attempt_at.getTime() ||
        Number(a.event_seq ?? 0) - Number(b.event_seq ?? 0),
    );
    const byEndpoint = new Map<string, ClaimRow[]>();
    for (const row of claimed) byEndpoint.set(row.endpoint_id, [...(byEndpoint.get(row.endpoint_id) ?? []), row]);
    // Fewer claimed than asked: each caller's next before anyone's spare.
    const next = items.map((): ClaimRow[] => []);
    for (let round = 1; round <= Math.max(0, ...items.map((item) => item.claims)); round += 1) {
      items.forEach(({ delivery, claims }, index) => {
        const row = claims >= round ? byEndpoint.get(delivery.endpointId)?.shift() : undefined;
        if (row) next[index]!.push(row);
      });
    }
    return items.map(({ delivery }, index) => ({ recorded: recorded.has(delivery.id), next: next[index]!, claimedAt }));
  }

  /**
   * The count moves only while the endpoint is enabled (the endpoint states in docs/decisions.md
   * have no transition for a failure of a disabled endpoint). Attempts still in flight when it
   * was disabled record their result and last_failure_at, but the count stays at the 10 that
   * disabled it (or at whatever it was when an admin turned it off) until turning it on clears
   * it. An attempt that sent nothing because its secret could not be opened is not the
   * receiver's failure: the endpoint is left as it is (no count, no last_failure_at, never
   * disabled for it), and the delivery is retried per the schedule like any failure.
   */
  private async recordFailure(
    trx: Transaction,
    delivery: ClaimedDelivery,
    result: AttemptResult,
  ): Promise<RecordResult> {
    type EndpointState = { enabled: boolean; was_enabled: boolean; now: Date };
    const { rows } = await trx.raw<{ rows: EndpointState[] }>(
      delivery.secret === null
        ? 'SELECT enabled, enabled AS was_enabled, now() AS now FROM webhook_endpoints WHERE id = ?'
        : `
      UPDATE webhook_endpoints e
         SET failure_count = CASE WHEN e.enabled THEN e.failure_count + 1 ELSE e.failure_count END,
             last_failure_at = now(),
             enabled = e.enabled AND e.failure_count + 1 < ?,
             disabled_reason = CASE WHEN e.enabled AND e.failure_count + 1 >= ? THEN 'consecutive_failures'
                                    ELSE e.disabled_reason END,
             updated_at = CASE WHEN e.enabled AND e.failure_count + 1 >= ? THEN now() ELSE e.updated_at END
        FROM (SELECT id, enabled FROM webhook_endpoints WHERE id = ? FOR NO KEY UPDATE) previous
       WHERE e.id = previous.id
      RETURNING e.enabled, previous.enabled AS was_enabled, now() AS now
      `,
      delivery.secret === null
        ? [delivery.endpointId]
        : [AUTO_DISABLE_AFTER_FAILURES, AUTO_DISABLE_AFTER_FAILURES, AUTO_DISABLE_AFTER_FAILURES, delivery.endpointId],
    );
    const endpoint = rows[0];
    if (!endpoint) throw new LeaseLost();

    const delay = retryDelayMs(this.options.retryDelaysMs, delivery.attempt);
    const lastAttempt = delivery.attempt >= maxAttempts(this.options.retryDelaysMs) || delay === null;
    let nextAttemptAt: Date | null = null;
    let ended: DeliveryEnd | null = null;
    if (lastAttempt) {
      ended = 'failed';
    } else if (!endpoint.enabled) {
      ended = 'skipped';
    } else {
      nextAttemptAt = new Date(endpoint.now.getTime() + delay);
    }
    await this.finishDelivery(trx, delivery, ended ?? 'pending', nextAttemptAt);
    await insertAttempt(trx, delivery, delivery.attempt, 'failed', result, nextAttemptAt);
    if (ended === 'skipped') {
      await insertAttempt(
        trx,
        delivery,
        delivery.attempt + 1,
        'skipped',
        { error: 'skipped: the endpoint is disabled', httpStatus: null, responseBody: null, durationMs: 0 },
        null,
      );
    }
    const endpointDisabled = endpoint.was_enabled && !endpoint.enabled;
    const othersSkipped = endpointDisabled
      ? await skipPendingDeliveries(
          trx,
          delivery.endpointId,
          `the endpoint was disabled after ${AUTO_DISABLE_AFTER_FAILURES} consecutive failures`,
        )
      : 0;
    return { recorded: true, nextAttemptAt, endpointDisabled, ended, othersSkipped };
  }

  /**
   * Ends this attempt's lease; throws LeaseLost when the lease is no longer ours. A delivery
   * that ends `skipped` gets its skipped line under the next attempt number, which it takes
   * here, as skipPendingDeliveries does: recovered later, its next real attempt must be
   * numbered after that line, or the attempt could not be logged (the log's key is the
   * delivery and its attempt) and its lease would run out and send it again.
   */
  private async finishDelivery(
    trx: Transaction,
    delivery: ClaimedDelivery,
    status: DeliveryEnd | 'pending',
    nextAttemptAt: Date | null,
  ): Promise<void> {
    const updated = await trx('webhook_deliveries')
      .where({ id: delivery.id, attempt_count: delivery.attempt })
      .whereNotNull('lease_expires_at')
      .update({
        status,
        ...(status === 'skipped' && { attempt_count: delivery.attempt + 1 }),
        next_attempt_at: nextAttemptAt,
        attempt_started_at: null,
        lease_expires_at: null,
        // A retry waits in the backlog until it is due; the scheduler releases it then.
        queued_at: null,
        completed_at: status === 'pending' ? null : trx.fn.now(),
      });
    if (updated === 0) throw new LeaseLost();
  }

  /** What an attempt sends, its secrets opened; `secret` null when SECRETS_KEY cannot open them. */
  private claimedDelivery(row: ClaimRow): ClaimedDelivery {
    return {
      id: row.id,
      endpointId: row.endpoint_id,
      eventType: row.event_type,
      attempt: row.attempt_count,
      url: row.url,
      secret: this.openSecrets(row),
      body: Buffer.from(serializeWebhookPayload(row.event_type, toIsoMillis(row.event_created_at), row.data), 'utf8'),
    };
  }

  /** As Send test and Resend open them (openSigningSecrets), but null where they would throw. */
  private openSecrets(row: ClaimRow): string[] | null {
    try {
      return openSigningSecrets(this.options.secretsKey, row);
    } catch (error) {
      if (error instanceof SecretOpenError) return null;
      throw error;
    }
  }
}

/** This attempt's lease expired and another claim took over: its result is not recorded. */
class LeaseLost extends Error {}

async function insertAttempt(
  trx: Transaction,
  delivery: ClaimedDelivery,
  attempt: number,
  outcome: 'failed' | 'skipped',
  result: Pick<AttemptResult, 'error' | 'httpStatus' | 'responseBody' | 'durationMs'> & { attemptedAt?: Date },
  nextAttemptAt: Date | null,
): Promise<void> {
  await trx('webhook_attempts').insert({
    delivery_id: delivery.id,
    endpoint_id: delivery.endpointId,
    event_type: delivery.eventType,
    attempt,
    outcome,
    http_status: result.httpStatus,
    error: result.error,
    response_body: result.responseBody,
    duration_ms: result.durationMs,
    attempted_at: result.attemptedAt ?? trx.fn.now(),
    next_attempt_at: nextAttemptAt,
    // The URL this attempt was sent to (read with its claim), or for a skipped line, would have been.
    url: delivery.url,
  });
}
