import { CONTROL_CHARACTER, invalidParam, type SecretsKeyring, type SetAsideReason } from '@retention/core';
import type Stripe from 'stripe';
import type { Transaction } from '@retention/db';
import {
  apiKeyOf,
  applyProcessorChanges,
  connectionById,
  fixModeIfUnknown,
  MAX_APPLY_ATTEMPTS,
  rejectProcessorKey,
  type ApplyOutcome,
  type ClaimedProcessorEvent,
  type ConnectionRow,
  type ProcessorChange,
} from '@retention/domain';
import { createStripeClient } from './client.js';
import { isSetAside, stripeEventToChanges } from './normalise.js';
import { storedStripeEvent } from './verify.js';

export interface StripeSettings {
  secretsKey: SecretsKeyring;
  /** STRIPE_API_BASE. */
  apiBase: string;
}

interface ConnectionRead {
  connection: ConnectionRow;
  stripe: Stripe | null;
}

/**
 * Applies one stored Stripe event inside the worker's claim transaction: normalise (asking
 * Stripe with the connection's key where the event leaves something out), then the domain's
 * changes. A key Stripe refuses disconnects the connection in this same transaction.
 *
 * The events of one batch share one connection and are applied in one savepoint (the same
 * `trx`), so its row and key are read once per savepoint, not once per event; a rejected key
 * drops them, so the next event reads the connection as now disconnected.
 */
export function createStripeEventApplier(settings: StripeSettings) {
  const connections = new WeakMap<Transaction, ConnectionRead>();
  const connectionOf = async (trx: Transaction, connectionId: string) => {
    const known = connections.get(trx);
    if (known && known.connection.id === connectionId) return known;
    const connection = await connectionById(trx, connectionId);
    const apiKey = connection.disconnected_reason === 'key_rejected' ? null : apiKeyOf(settings.secretsKey, connection);
    const read: ConnectionRead = {
      connection,
      stripe: apiKey === null ? null : await createStripeClient(apiKey, settings.apiBase),
    };
    connections.set(trx, read);
    return read;
  };
  return async (trx: Transaction, event: ClaimedProcessorEvent): Promise<ApplyOutcome> => {
    const read = await connectionOf(trx, event.connection_id);
    // Before anything is looked up with the key or applied: not this account's, or not its mode.
    const setAside = await setAsideReason(trx, read, event.payload);
    if (setAside !== null) return { set_aside: setAside };
    const { connection, stripe } = read;
    const changes = await stripeEventToChanges(storedStripeEvent(event.payload), {
      stripe,
      onKeyRejected: async () => {
        connections.delete(trx);
        await rejectProcessorKey(trx, connection.id);
      },
      lastAttempt: event.attempts + 1 >= MAX_APPLY_ATTEMPTS,
    });
    if (changes === null) return 'ignored';
    if (isSetAside(changes)) return changes;
    assertStripeIds(changes);
    await applyProcessorChanges(
      { trx, connection_id: connection.id, workspace_id: connection.workspace_id, at: event.psp_created_at },
      changes,
    );
    return 'applied';
  };
}

/**
 * Why an event is not this workspace's to apply (docs/processor.md, "Set aside"), or null:
 * - it carries `account`: Stripe sends it about an account connected to this one (Connect),
 *   only to an endpoint that listens to connected accounts; that account's customers and
 *   payments are not this workspace's, and this key must not look them up;
 * - its `livemode` is not the connection's mode. A connection without a mode yet (no key) takes
 *   the mode of the first event of its own account applied (in Stripe's `created` order).
 * An event without a boolean `livemode` (Stripe always sends one) is not judged by mode.
 */
async function setAsideReason(
  trx: Transaction,
  read: ConnectionRead,
  payload: Record<string, unknown>,
): Promise<SetAsideReason | null> {
  if (typeof payload.account === 'string' && payload.account !== '') return 'connected_account';
  if (typeof payload.livemode !== 'boolean') return null;
  const mode = payload.livemode ? 'live' : 'test';
  if (read.connection.mode === null) {
    read.connection = { ...read.connection, mode: await fixModeIfUnknown(trx, read.connection.id, mode) };
  }
  return read.connection.mode === mode ? null : 'other_mode';
}

/**
 * Refuses, as a malformed event (invalid_param: parked at once, no retry can fix it), a change
 * whose Stripe id (every `psp_*_id`) holds a control character: no Stripe id does, and the
 * database would refuse a NUL after retries with a message about encodings.
 */
function assertStripeIds(changes: ReadonlyArray<ProcessorChange>): void {
  const pending: unknown[] = [...changes];
  for (let value = pending.pop(); value !== undefined; value = pending.pop()) {
    if (typeof value !== 'object' || value === null || value instanceof Date) continue;
    for (const [key, field] of Object.entries(value)) {
      if (typeof field === 'object') pending.push(field);
      else if (typeof field === 'string' && /^psp_\w*id$/.test(key) && CONTROL_CHARACTER.test(field)) {
        throw invalidParam(
          `The event is malformed: the Stripe id ${JSON.stringify(field)} holds a control character, which no Stripe id does.`,
        );
      }
    }
  }
}
