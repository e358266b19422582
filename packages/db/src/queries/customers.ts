import type { Customer, CustomerDetail, ListEnvelope } from '@retention/core';
import type { Queryable } from '../connection.js';
import {
  toCampaign,
  toCustomer,
  toSubscription,
  type CampaignRow,
  type CustomerRow,
  type SubscriptionRow,
} from '../resources.js';
import { keysetPage, listEnvelope } from './pagination.js';

export interface CustomerFilters {
  /** Exact match, case-insensitive. */
  email?: string;
  /** Customers carrying this tag; tags are stored lowercase, so matching is case-insensitive. */
  tag?: string;
  cursor?: Date;
}

const createdAt = (row: CustomerRow) => row.created_at;

export async function listCustomers(
  db: Queryable,
  workspaceId: string,
  filters: CustomerFilters,
): Promise<ListEnvelope<Customer>> {
  const filtered = () => {
    const query = db<CustomerRow>('customers').where({ workspace_id: workspaceId });
    if (filters.email !== undefined) query.whereRaw('lower(email) = lower(?)', [filters.email]);
    if (filters.tag !== undefined) query.whereRaw('tags @> ARRAY[?]::text[]', [filters.tag.trim().toLowerCase()]);
    return query;
  };
  const page = await keysetPage<CustomerRow>({
    filtered,
    column: 'created_at',
    timestampOf: createdAt,
    cursor: filters.cursor,
  });
  return listEnvelope(page, toCustomer, createdAt);
}

export const RECENT_CAMPAIGNS_PER_CUSTOMER = 5;

/** One customer with its subscriptions and five newest campaigns, or undefined. */
export async function findCustomerDetail(
  db: Queryable,
  workspaceId: string,
  id: string,
): Promise<CustomerDetail | undefined> {
  const [customer, subscriptions, campaigns] = await Promise.all([
    db<CustomerRow>('customers').where({ workspace_id: workspaceId, id }).first(),
    db<SubscriptionRow>('subscriptions')
      .where({ workspace_id: workspaceId, customer_id: id })
      .orderBy([
        { column: 'created_at', order: 'desc' },
        { column: 'id', order: 'desc' },
      ]),
    db<CampaignRow>('recovery_campaigns')
      .where({ workspace_id: workspaceId, customer_id: id })
      .orderBy([
        { column: 'first_failed_at', order: 'desc' },
        { column: 'id', order: 'desc' },
      ])
      .limit(RECENT_CAMPAIGNS_PER_CUSTOMER),
  ]);
  if (!customer) return undefined;
  return {
    ...toCustomer(customer),
    subscriptions: subscriptions.map(toSubscription),
    recent_campaigns: campaigns.map(toCampaign),
  };
}
