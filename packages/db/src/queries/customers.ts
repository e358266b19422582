import type { Customer, CustomerDetail, ListEnvelope } from '@retention/core';
import type { Queryable } from '../connection.js';
import { campaignJsonSql, customerJsonSql, JsonText, subscriptionJsonSql } from '../resource-json.js';
import { keysetPage, listEnvelope } from './pagination.js';

export interface CustomerFilters {
  /** Exact match, case-insensitive. */
  email?: string | undefined;
  /** Customers carrying this tag; tags are stored lowercase, so matching is case-insensitive. */
  tag?: string | undefined;
  cursor?: Date | undefined;
}

export async function listCustomers(
  db: Queryable,
  workspaceId: string,
  filters: CustomerFilters,
): Promise<JsonText<ListEnvelope<Customer>>> {
  const filtered = () => {
    const query = db('customers').where({ workspace_id: workspaceId });
    if (filters.email !== undefined) query.whereRaw('lower(email) = lower(?)', [filters.email]);
    if (filters.tag !== undefined) query.whereRaw('tags @> ARRAY[?]::text[]', [filters.tag.trim().toLowerCase()]);
    return query;
  };
  const page = await keysetPage({
    db,
    filtered,
    column: 'created_at',
    json: customerJsonSql('customers'),
    cursor: filters.cursor,
  });
  return listEnvelope(page);
}

export const RECENT_CAMPAIGNS_PER_CUSTOMER = 5;

/** One customer with its subscriptions and five newest campaigns, in one query; or undefined. */
export async function findCustomerDetail(
  db: Queryable,
  workspaceId: string,
  id: string,
): Promise<JsonText<CustomerDetail> | undefined> {
  const subscriptions = `coalesce((
      SELECT json_agg(${subscriptionJsonSql('s')} ORDER BY s.created_at DESC, s.id DESC)
        FROM subscriptions s WHERE s.workspace_id = c.workspace_id AND s.customer_id = c.id
    ), '[]'::json)`;
  const recentCampaigns = `coalesce((
      SELECT json_agg(recent.json ORDER BY recent.first_failed_at DESC, recent.id DESC)
        FROM (SELECT k.id, k.first_failed_at, ${campaignJsonSql('k')} AS json
                FROM recovery_campaigns k WHERE k.workspace_id = c.workspace_id AND k.customer_id = c.id
               ORDER BY k.first_failed_at DESC, k.id DESC
               LIMIT ${RECENT_CAMPAIGNS_PER_CUSTOMER}) recent
    ), '[]'::json)`;
  const json = customerJsonSql('c', [
    ['subscriptions', subscriptions],
    ['recent_campaigns', recentCampaigns],
  ]);
  const row = await db('customers as c')
    .where({ 'c.workspace_id': workspaceId, 'c.id': id })
    .first<{ json: string } | undefined>(db.raw(`${json}::text AS json`));
  return row && new JsonText(row.json);
}
