import { invalidField, notFound } from '@retention/core';
import type { CustomerRow, Queryable, SubscriptionRow } from '@retention/db';

/**
 * The rows an action refers to, found or refused. An id of another workspace is reported
 * exactly like an unknown id: whether it exists elsewhere is none of the caller's business.
 */

function scopeMessage(workspaceId: string | undefined): string {
  return workspaceId === undefined ? '' : ' in this workspace';
}

export async function requireCustomer(db: Queryable, customerId: string, workspaceId?: string): Promise<CustomerRow> {
  const query = db<CustomerRow>('customers').where({ id: customerId });
  if (workspaceId !== undefined) query.where({ workspace_id: workspaceId });
  const row = await query.first();
  if (!row) throw notFound(`No customer with id ${customerId}${scopeMessage(workspaceId)}`);
  return row;
}

export type SubscriptionWithEmail = SubscriptionRow & { customer_email: string };

/**
 * A subscription with its customer's email address, share-locked until the transaction
 * ends so that its status cannot change under the action that checked it.
 */
export async function requireSubscription(
  db: Queryable,
  subscriptionId: string,
  workspaceId?: string,
): Promise<SubscriptionWithEmail> {
  const query = db<SubscriptionWithEmail>('subscriptions as s')
    .join('customers as c', function joinCustomer() {
      this.on('c.workspace_id', 's.workspace_id').andOn('c.id', 's.customer_id');
    })
    .where('s.id', subscriptionId)
    .select('s.*', 'c.email as customer_email')
    .forShare('s');
  if (workspaceId !== undefined) query.where('s.workspace_id', workspaceId);
  const row = (await query.first()) as SubscriptionWithEmail | undefined;
  if (!row) throw notFound(`No subscription with id ${subscriptionId}${scopeMessage(workspaceId)}`);
  return row;
}

/** A subscription named together with a customer must be one of that customer's. */
export function assertSubscriptionOf(subscription: SubscriptionRow, customerId: string): void {
  if (subscription.customer_id !== customerId) {
    throw invalidField('subscription_id', `subscription ${subscription.id} belongs to another customer`);
  }
}

/** The operator acting on a row: a user of that row's workspace, whatever their role. */
export async function requireActor(db: Queryable, userId: string, workspaceId: string): Promise<void> {
  const row = await db<{ id: string; workspace_id: string }>('users')
    .where({ id: userId, workspace_id: workspaceId })
    .first('id');
  if (!row) throw notFound(`No user with id ${userId} in this workspace`);
}
