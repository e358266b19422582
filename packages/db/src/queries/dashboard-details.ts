import { notFound, toIsoMillis } from '@retention/core';
import type { Queryable } from '../connection.js';
import {
  toCancelSession,
  toCustomer,
  toSubscription,
  type CancelSessionRow,
  type CustomerRow,
  type SubscriptionRow,
} from '../resources.js';
import { campaignListQuery, toCampaignListRow } from './campaign-list.js';
import { cancelSessionListQuery, toCancelSessionListRow } from './cancel-session-list.js';

/**
 * The dashboard's customer and cancel-session detail pages (docs/dashboard-api.md, "Data
 * pages"). Another workspace's id is not found. Each part is one index range: subscriptions by
 * subscriptions_customer_idx, campaigns by recovery_campaigns_customer_idx, cancel sessions and
 * win-backs by their (workspace_id, customer_id, time) indexes.
 */

type CampaignListDbRow = Parameters<typeof toCampaignListRow>[0];
type CancelSessionListDbRow = Parameters<typeof toCancelSessionListRow>[0];

/** How many of a customer's campaigns, cancel sessions and win-backs the detail shows, newest first. */
export const CUSTOMER_DETAIL_RECENT = 50;

export interface WinbackSummary {
  id: string;
  psp_subscription_id: string;
  days_away: number;
  amount_cents: number;
  currency: string;
  recorded_at: string;
}

export async function customerDetailView(db: Queryable, workspaceId: string, customerId: string) {
  const customer = await db('customers')
    .where({ workspace_id: workspaceId, id: customerId })
    .first<CustomerRow | undefined>('id', 'psp_customer_id', 'email', 'name', 'tags', 'created_at');
  if (!customer) throw notFound(`No customer with id ${customerId}`);
  const scope = { customer_id: customerId };
  const [subscriptions, campaigns, cancelSessions, winbacks] = await Promise.all([
    db('subscriptions')
      .where({ workspace_id: workspaceId, customer_id: customerId })
      .orderBy([
        { column: 'created_at', order: 'desc' },
        { column: 'id', order: 'desc' },
      ])
      .select<SubscriptionRow[]>('*'),
    campaignListQuery(db, workspaceId, scope).limit(CUSTOMER_DETAIL_RECENT) as Promise<CampaignListDbRow[]>,
    cancelSessionListQuery(db, workspaceId, scope).limit(CUSTOMER_DETAIL_RECENT) as Promise<CancelSessionListDbRow[]>,
    db('winbacks')
      .where({ workspace_id: workspaceId, customer_id: customerId })
      .orderBy([
        { column: 'recorded_at', order: 'desc' },
        { column: 'id', order: 'desc' },
      ])
      .limit(CUSTOMER_DETAIL_RECENT)
      .select<Array<Omit<WinbackSummary, 'recorded_at'> & { recorded_at: Date }>>(
        'id',
        'psp_subscription_id',
        'days_away',
        'amount_cents',
        'currency',
        'recorded_at',
      ),
  ]);
  return {
    ...toCustomer(customer),
    subscriptions: subscriptions.map(toSubscription),
    campaigns: campaigns.map(toCampaignListRow),
    cancel_sessions: cancelSessions.map(toCancelSessionListRow),
    winbacks: winbacks.map((row): WinbackSummary => ({ ...row, recorded_at: toIsoMillis(row.recorded_at) })),
  };
}

export async function cancelSessionDetailView(db: Queryable, workspaceId: string, sessionId: string) {
  const session = await db('cancel_sessions')
    .where({ workspace_id: workspaceId, id: sessionId })
    .first<CancelSessionRow | undefined>();
  if (!session) throw notFound(`No cancel session with id ${sessionId}`);
  const [customer, subscription] = await Promise.all([
    db('customers').where({ workspace_id: workspaceId, id: session.customer_id }).first<CustomerRow>(),
    session.subscription_id === null
      ? undefined
      : db('subscriptions')
          .where({ workspace_id: workspaceId, id: session.subscription_id })
          .first<SubscriptionRow | undefined>(),
  ]);
  return {
    ...toCancelSession(session),
    customer: toCustomer(customer),
    subscription: subscription ? toSubscription(subscription) : null,
  };
}
