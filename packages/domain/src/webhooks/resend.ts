import {
  conflict,
  invalidParam,
  notFound,
  serializeWebhookPayload,
  toIsoMillis,
  type SecretsKeyring,
} from '@retention/core';
import { inTransaction, type Db } from '@retention/db';
import { assertUuid } from '../validate.js';
import { toDeliveryLogEntry, type AttemptRow, type DeliveryLogEntry } from './delivery-log.js';
import { assertWebhookManager } from './permissions.js';
import { signingSecretsOf } from './roll-secret.js';
import type { WebhookSender } from './sender.js';
import { sendSigned } from './signing-secrets.js';

/**
 * Resend: one more attempt of a delivery's event, now, from the caller's process, logged as
 * the delivery's next attempt. It takes the delivery's lease the way the worker's claim does
 * (the worker's own claim waits for an unexpired lease), so the worker and a resend never send
 * the same delivery at once; an attempt already in flight is a 409. On success the delivery is
 * done, and an enabled endpoint's failure count goes back to zero: the count is of consecutive
 * failed deliveries (the spec's endpoint states), and a delivery just succeeded. On failure the
 * delivery goes back to where it was (a pending retry keeps its time) and the count is left
 * alone: a person checking a receiver, whose click should not push the endpoint to its
 * auto-disable (docs/decisions.md, "Resend and the failure count").
 */
/** Added to the sender's timeout for the lease, as the worker does: an attempt never outlives it. */
export const RESEND_LEASE_MARGIN_MS = 5_000;

interface DeliveryRow {
  id: string;
  workspace_id: string;
  endpoint_id: string;
  event_id: string | null;
  event_type: string;
  status: 'pending' | 'succeeded' | 'failed' | 'skipped';
  attempt_count: number;
  next_attempt_at: Date | null;
  lease_expires_at: Date | null;
  completed_at: Date | null;
}

export async function resendDelivery(
  db: Db,
  secretsKey: SecretsKeyring,
  sender: WebhookSender,
  input: { delivery_id: string; actor_id: string; workspace_id?: string; lease_ms: number },
): Promise<DeliveryLogEntry> {
  assertUuid(input.delivery_id);
  const claimed = await inTransaction(db, async (trx) => {
    const query = trx<DeliveryRow>('webhook_deliveries').where({ id: input.delivery_id });
    if (input.workspace_id) query.where({ workspace_id: input.workspace_id });
    const delivery = await query.forNoKeyUpdate().first();
    if (!delivery) throw notFound(`No delivery with id ${input.delivery_id}`);
    await assertWebhookManager(trx, delivery.workspace_id, input.actor_id);
    if (!delivery.event_id) throw invalidParam('A Send test has no event to resend: use Send test again.');
    const { rows } = await trx.raw<{ rows: Array<{ now: Date }> }>('SELECT now() AS now');
    const now = rows[0]!.now;
    if (delivery.status === 'pending' && delivery.lease_expires_at && delivery.lease_expires_at > now) {
      throw conflict('An attempt of this delivery is in flight; wait for its result.');
    }
    const [leased] = await trx<DeliveryRow>('webhook_deliveries')
      .where({ id: delivery.id })
      .update({
        status: 'pending',
        next_attempt_at: delivery.next_attempt_at ?? now,
        completed_at: null,
        attempt_count: delivery.attempt_count + 1,
        attempt_started_at: now,
        lease_expires_at: new Date(now.getTime() + input.lease_ms),
      } as never)
      .returning('*');
    const event = await trx('events')
      .where({ id: delivery.event_id })
      .first<{ type: string; data: unknown; created_at: Date }>('type', 'data', 'created_at');
    const endpoint = await trx('webhook_endpoints').where({ id: delivery.endpoint_id }).first<{ url: string }>('url');
    return { before: delivery, leased: leased!, event: event, url: endpoint.url };
  });

  const body = Buffer.from(
    serializeWebhookPayload(claimed.event.type, toIsoMillis(claimed.event.created_at), claimed.event.data),
    'utf8',
  );
  // A secret SECRETS_KEY cannot open sends nothing: a failed attempt, as the worker records.
  const result = await sendSigned(sender, claimed.url, body, () =>
    signingSecretsOf(db, secretsKey, claimed.before.endpoint_id),
  );
  const { before, leased } = claimed;

  return inTransaction(db, async (trx) => {
    const ended = result.succeeded ? 'succeeded' : before.status;
    const nextAttemptAt = ended === 'pending' ? before.next_attempt_at : null;
    const updated = await trx('webhook_deliveries')
      .where({ id: before.id, attempt_count: leased.attempt_count })
      .whereNotNull('lease_expires_at')
      .update({
        status: ended,
        next_attempt_at: nextAttemptAt,
        attempt_started_at: null,
        lease_expires_at: null,
        // A pending delivery keeps its place (its job may be in Redis); a finished one has none.
        ...(ended !== 'pending' && { queued_at: null }),
        completed_at: ended === 'pending' ? null : trx.fn.now(),
      });
    if (updated === 0) throw conflict('The delivery changed while it was being resent.');
    if (result.succeeded) {
      await trx('webhook_endpoints')
        .where({ id: before.endpoint_id })
        .update({
          last_success_at: trx.fn.now(),
          // A disabled endpoint keeps its count until it is turned on, which clears it.
          failure_count: trx.raw('CASE WHEN enabled THEN 0 ELSE failure_count END'),
        });
    }
    const [attempt] = await trx('webhook_attempts')
      .insert({
        delivery_id: before.id,
        endpoint_id: before.endpoint_id,
        event_type: before.event_type,
        attempt: leased.attempt_count,
        outcome: result.succeeded ? 'succeeded' : 'failed',
        http_status: result.httpStatus,
        error: result.error,
        response_body: result.responseBody,
        duration_ms: result.durationMs,
        attempted_at: result.attemptedAt,
        next_attempt_at: nextAttemptAt,
        url: claimed.url,
      })
      .returning<AttemptRow[]>('*');
    return toDeliveryLogEntry({ ...attempt!, event_id: before.event_id });
  });
}
