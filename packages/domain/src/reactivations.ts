import { Type } from '@sinclair/typebox';
import { conflict, toIsoMillis } from '@retention/core';
import { inTransaction, type Db } from '@retention/db';
import { recordEvent } from './outbox.js';
import { requireSubscription } from './lookups.js';
import { IdInput, inputValidator } from './validate.js';

/**
 * A win-back email that was sent for a canceled subscription (the email is another system's job).
 */
export interface Reactivation {
  id: string;
  object: 'reactivation';
  workspace_id: string;
  customer_id: string;
  subscription_id: string;
  sent_at: string;
}

interface ReactivationRow {
  id: string;
  workspace_id: string;
  customer_id: string;
  subscription_id: string;
  sent_at: Date;
}

function toReactivation(row: ReactivationRow): Reactivation {
  return {
    id: row.id,
    object: 'reactivation',
    workspace_id: row.workspace_id,
    customer_id: row.customer_id,
    subscription_id: row.subscription_id,
    sent_at: toIsoMillis(row.sent_at),
  };
}

const validateReactivation = inputValidator(
  Type.Object({ subscription_id: IdInput(), workspace_id: Type.Optional(IdInput()) }, { additionalProperties: false }),
);

/**
 * Records that a win-back email was sent for a canceled subscription, and emits
 * `reactivation.sent`. A subscription that is not canceled is a `conflict`: its customer
 * has not left.
 */
export async function sendReactivation(
  db: Db,
  input: { subscription_id: string; workspace_id?: string },
): Promise<Reactivation> {
  const valid = validateReactivation(input);
  return inTransaction(db, async (trx) => {
    const subscription = await requireSubscription(trx, valid.subscription_id, valid.workspace_id);
    if (subscription.status !== 'canceled') {
      throw conflict(
        `Subscription ${subscription.id} is ${subscription.status}, not canceled: there is no one to win back`,
      );
    }
    const [row] = (await trx('reactivations')
      .insert({
        workspace_id: subscription.workspace_id,
        customer_id: subscription.customer_id,
        subscription_id: subscription.id,
      })
      .returning('*')) as ReactivationRow[];
    const reactivation = toReactivation(row!);
    await recordEvent(trx, reactivation.workspace_id, 'reactivation.sent', {
      reactivation_id: reactivation.id,
      customer_email: subscription.customer_email,
      subscription_id: reactivation.subscription_id,
    });
    return reactivation;
  });
}
