import type { Transaction } from '@retention/db';
import {
  apiKeyOf,
  applyProcessorChanges,
  connectionById,
  MAX_APPLY_ATTEMPTS,
  rejectProcessorKey,
  type ApplyOutcome,
  type ClaimedProcessorEvent,
} from '@retention/domain';
import { createStripeClient } from './client.js';
import { stripeEventToChanges } from './normalise.js';
import { storedStripeEvent } from './verify.js';

export interface StripeSettings {
  secretsKey: Buffer;
  /** STRIPE_API_BASE. */
  apiBase: string;
}

/**
 * Applies one stored Stripe event inside the worker's claim transaction: normalise (asking
 * Stripe with the connection's key where the event leaves something out), then the domain's
 * changes. A key Stripe refuses disconnects the connection in this same transaction.
 */
export function createStripeEventApplier(settings: StripeSettings) {
  return async (trx: Transaction, event: ClaimedProcessorEvent): Promise<ApplyOutcome> => {
    const connection = await connectionById(trx, event.connection_id);
    const apiKey = connection.disconnected_reason === 'key_rejected' ? null : apiKeyOf(settings.secretsKey, connection);
    const changes = await stripeEventToChanges(storedStripeEvent(event.payload), {
      stripe: apiKey === null ? null : createStripeClient(apiKey, settings.apiBase),
      onKeyRejected: () => rejectProcessorKey(trx, connection.id),
      lastAttempt: event.attempts + 1 >= MAX_APPLY_ATTEMPTS,
    });
    if (changes === null) return 'ignored';
    await applyProcessorChanges(
      { trx, connection_id: connection.id, workspace_id: connection.workspace_id, at: event.psp_created_at },
      changes,
    );
    return 'applied';
  };
}
