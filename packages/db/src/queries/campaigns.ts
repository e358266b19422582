import type { CampaignDetail, CampaignStatus, ListEnvelope, RecoveryCampaign } from '@retention/core';
import type { Queryable } from '../connection.js';
import {
  toCampaign,
  toCustomer,
  toSubscriptionSummary,
  type CampaignRow,
  type CustomerRow,
  type SubscriptionRow,
} from '../resources.js';
import { keysetPage, listEnvelope } from './pagination.js';

export interface CampaignFilters {
  status?: CampaignStatus;
  cursor?: Date;
}

const firstFailedAt = (row: CampaignRow) => row.first_failed_at;

export async function listCampaigns(
  db: Queryable,
  workspaceId: string,
  filters: CampaignFilters,
): Promise<ListEnvelope<RecoveryCampaign>> {
  const filtered = () => {
    const query = db<CampaignRow>('recovery_campaigns').where({ workspace_id: workspaceId });
    if (filters.status !== undefined) query.where({ status: filters.status });
    return query;
  };
  const page = await keysetPage<CampaignRow>({
    filtered,
    column: 'first_failed_at',
    timestampOf: firstFailedAt,
    cursor: filters.cursor,
  });
  return listEnvelope(page, toCampaign, firstFailedAt);
}

/** One campaign with its customer and a summary of its subscription, in one query. */
export async function findCampaignDetail(
  db: Queryable,
  workspaceId: string,
  id: string,
): Promise<CampaignDetail | undefined> {
  const row = await db<CampaignJoinRow>('recovery_campaigns as k')
    .join('customers as c', function joinCustomer() {
      this.on('c.workspace_id', 'k.workspace_id').andOn('c.id', 'k.customer_id');
    })
    .join('subscriptions as s', function joinSubscription() {
      this.on('s.workspace_id', 'k.workspace_id').andOn('s.id', 'k.subscription_id');
    })
    .where({ 'k.workspace_id': workspaceId, 'k.id': id })
    .first<CampaignJoinRow | undefined>(
      db.raw('row_to_json(k) AS campaign, row_to_json(c) AS customer, row_to_json(s) AS subscription'),
    );
  if (!row) return undefined;
  return {
    ...toCampaign(reviveDates(row.campaign, ['first_failed_at', 'recovered_at', 'closed_at'])),
    customer: toCustomer(reviveDates(row.customer, ['created_at'])),
    subscription: toSubscriptionSummary(row.subscription as unknown as SubscriptionRow),
  };
}

interface CampaignJoinRow {
  campaign: JsonRow<CampaignRow>;
  customer: JsonRow<CustomerRow>;
  subscription: JsonRow<SubscriptionRow>;
}

/** A row as row_to_json renders it: timestamps arrive as strings. */
type JsonRow<Row> = { [K in keyof Row]: Row[K] extends Date | null ? string | null : Row[K] };

function reviveDates<Row>(row: JsonRow<Row>, columns: Array<keyof Row>): Row {
  const revived = { ...row } as Record<keyof Row, unknown>;
  for (const column of columns) {
    const value = revived[column];
    revived[column] = typeof value === 'string' ? new Date(value) : value;
  }
  return revived as Row;
}
