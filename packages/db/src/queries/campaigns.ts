import type { CampaignDetail, CampaignStatus, ListEnvelope, RecoveryCampaign } from '@retention/core';
import type { Queryable } from '../connection.js';
import { campaignJsonSql, customerJsonSql, JsonText, subscriptionSummaryJsonSql } from '../resource-json.js';
import { keysetPage, listEnvelope } from './pagination.js';

export interface CampaignFilters {
  status?: CampaignStatus | undefined;
  cursor?: Date | undefined;
}

export async function listCampaigns(
  db: Queryable,
  workspaceId: string,
  filters: CampaignFilters,
): Promise<JsonText<ListEnvelope<RecoveryCampaign>>> {
  const filtered = () => {
    const query = db('recovery_campaigns').where({ workspace_id: workspaceId });
    if (filters.status !== undefined) query.where({ status: filters.status });
    return query;
  };
  const page = await keysetPage({
    db,
    filtered,
    column: 'first_failed_at',
    json: campaignJsonSql('recovery_campaigns'),
    cursor: filters.cursor,
  });
  return listEnvelope(page);
}

/** One campaign with its customer and a summary of its subscription, in one query. */
export async function findCampaignDetail(
  db: Queryable,
  workspaceId: string,
  id: string,
): Promise<JsonText<CampaignDetail> | undefined> {
  const json = campaignJsonSql('k', [
    ['customer', customerJsonSql('c')],
    ['subscription', subscriptionSummaryJsonSql('s')],
  ]);
  const row = await db('recovery_campaigns as k')
    .join('customers as c', function joinCustomer() {
      this.on('c.workspace_id', 'k.workspace_id').andOn('c.id', 'k.customer_id');
    })
    .join('subscriptions as s', function joinSubscription() {
      this.on('s.workspace_id', 'k.workspace_id').andOn('s.id', 'k.subscription_id');
    })
    .where({ 'k.workspace_id': workspaceId, 'k.id': id })
    .first<{ json: string } | undefined>(db.raw(`${json}::text AS json`));
  return row && new JsonText(row.json);
}
