import { PING_DATA, PING_EVENT_TYPE, serializeWebhookPayload, toIsoMillis, type SecretsKeyring } from '@retention/core';
import { inTransaction, type Db } from '@retention/db';
import { assertUuid } from '../validate.js';
import { toDeliveryLogEntry, type AttemptRow, type DeliveryLogEntry } from './delivery-log.js';
import { findEndpointRow } from './endpoints.js';
import { assertWebhookManager } from './permissions.js';
import type { WebhookSender } from './sender.js';
import { openSigningSecrets, sendSigned } from './signing-secrets.js';

/**
 * The dashboard's Send test (docs/webhooks.md, "Event types"): POSTs a signed `ping` right now, bypassing dispatch
 * and the queue, whatever the processor status and whether or not the endpoint is enabled
 * (so an owner can check a receiver before turning it back on). The attempt is recorded in
 * the delivery log; the endpoint's failure count and last success/failure stay as they were,
 * because a test is not traffic. A secret SECRETS_KEY cannot open sends nothing: the attempt
 * is recorded as failed, saying so (docs/decisions.md, "Tokens and secrets").
 */
export async function sendTestWebhook(
  db: Db,
  secretsKey: SecretsKeyring,
  sender: WebhookSender,
  endpointId: string,
  actorId: string,
): Promise<DeliveryLogEntry> {
  assertUuid(endpointId);
  const endpoint = await findEndpointRow(db, endpointId);
  await assertWebhookManager(db, endpoint.workspace_id, actorId);
  const body = Buffer.from(serializeWebhookPayload(PING_EVENT_TYPE, toIsoMillis(new Date()), PING_DATA), 'utf8');
  const result = await sendSigned(sender, endpoint.url, body, () => openSigningSecrets(secretsKey, endpoint));
  const outcome = result.succeeded ? 'succeeded' : 'failed';
  return inTransaction(db, async (trx) => {
    const [delivery] = await trx('webhook_deliveries')
      .insert({
        workspace_id: endpoint.workspace_id,
        endpoint_id: endpoint.id,
        event_id: null,
        event_type: PING_EVENT_TYPE,
        status: outcome,
        attempt_count: 1,
        next_attempt_at: null,
        completed_at: trx.fn.now(),
      })
      .returning<Array<{ id: string }>>('id');
    const [attempt] = await trx('webhook_attempts')
      .insert({
        delivery_id: delivery!.id,
        endpoint_id: endpoint.id,
        event_type: PING_EVENT_TYPE,
        attempt: 1,
        outcome,
        http_status: result.httpStatus,
        error: result.error,
        response_body: result.responseBody,
        duration_ms: result.durationMs,
        attempted_at: result.attemptedAt,
        next_attempt_at: null,
        url: endpoint.url,
      })
      .returning<AttemptRow[]>('*');
    return toDeliveryLogEntry({ ...attempt!, event_id: null });
  });
}
