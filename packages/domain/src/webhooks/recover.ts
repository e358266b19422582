import { conflict } from '@retention/core';
import { inTransaction, type Db } from '@retention/db';
import { recordSecurityEvent, type Actor } from '../security-log.js';
import { assertPastDate, assertUuid } from '../validate.js';
import { endpointTarget, findEndpointRow } from './endpoints.js';
import { assertWebhookManager } from './permissions.js';

/**
 * Retry failed since…: every failed or skipped delivery of the endpoint created since `since`
 * goes back to pending, due now, once each (a delivery already pending is not touched). The
 * worker's scheduler releases them like any due delivery and claims each under its lease, so none
 * is sent twice at once; their next attempt numbers follow the ones already logged.
 * `retrying` counts the deliveries since `since` that failed an attempt and are still pending
 * (their next retry scheduled, or one running): not requeued, and said so, so that "0 queued"
 * after failures that are still being retried does not read as if nothing had failed. Logged
 * when it requeued any.
 */
export async function recoverDeliveries(
  db: Db,
  input: { endpoint_id: string; actor_id: string; since: Date },
  audit?: Actor,
): Promise<{ requeued: number; retrying: number }> {
  assertUuid(input.endpoint_id);
  const since = assertPastDate(input.since, 'since');
  return inTransaction(db, async (trx) => {
    const endpoint = await findEndpointRow(trx, input.endpoint_id, 'for-no-key-update');
    await assertWebhookManager(trx, endpoint.workspace_id, input.actor_id);
    // A disabled endpoint would skip them again at once: turning it on comes first.
    if (!endpoint.enabled) throw conflict('The endpoint is off: turn it on, then retry its failed deliveries.');
    const [retrying] = await trx('webhook_deliveries')
      .where({ endpoint_id: endpoint.id, status: 'pending' })
      .where('attempt_count', '>', 0)
      .where('created_at', '>=', since)
      .count<Array<{ retrying: string }>>({ retrying: '*' });
    const requeued = await trx('webhook_deliveries')
      .where({ endpoint_id: endpoint.id })
      .whereIn('status', ['failed', 'skipped'])
      .whereNotNull('event_id')
      .where('created_at', '>=', since)
      .update({ status: 'pending', next_attempt_at: trx.fn.now(), completed_at: null });
    // A retry that found nothing to send changed nothing, and writes no record, as any change
    // that changes nothing (docs/dashboard-api.md, "Security log"): "0 deliveries sent again"
    // read as an action.
    if (requeued > 0) {
      await recordSecurityEvent(trx, {
        workspace_id: endpoint.workspace_id,
        action: 'webhook.deliveries_requeued',
        actor: audit ?? { type: 'operator', user_id: input.actor_id, label: 'operator CLI' },
        target: endpointTarget(endpoint),
        details: { since: since.toISOString(), requeued },
      });
    }
    return { requeued, retrying: Number(retrying?.retrying ?? 0) };
  });
}
