import {
  CAMPAIGN_STATUSES,
  DECLINE_CATEGORIES,
  invalidParam,
  type CampaignStatus,
  type DeclineCategory,
} from '@retention/core';
import type { Knex } from 'knex';
import type { Queryable } from '../connection.js';

/**
 * The rows of a campaigns CSV export: the filtered campaigns, newest first, with the table's
 * columns plus ids. Returned as a query for the caller to stream (`.stream()`): a million rows
 * pass through without being held.
 */

export interface CampaignExportFilters {
  status?: CampaignStatus;
  decline_category?: DeclineCategory;
  /** first_failed_at >= from */
  from?: Date;
  /** first_failed_at < to */
  to?: Date;
  /** An exact invoice id or customer e-mail. */
  q?: string;
}

export const CAMPAIGN_EXPORT_COLUMNS = [
  'id',
  'psp_invoice_id',
  'customer_id',
  'customer_email',
  'subscription_id',
  'amount_cents',
  'currency',
  'status',
  'decline_code',
  'decline_category',
  'recovered_via',
  'first_failed_at',
  'recovered_at',
  'closed_at',
] as const;

function parseInstant(name: string, value: string): Date {
  const date = new Date(value);
  if (!/^\d{4}-\d{2}-\d{2}/.test(value) || Number.isNaN(date.getTime())) {
    throw invalidParam(`${name}: must be an ISO 8601 date or timestamp`);
  }
  return date;
}

/** Validates the query strings of a campaign list or export. */
export function campaignExportFilters(
  query: Partial<Record<keyof CampaignExportFilters, string>>,
): CampaignExportFilters {
  const filters: CampaignExportFilters = {};
  if (query.status !== undefined) {
    if (!(CAMPAIGN_STATUSES as readonly string[]).includes(query.status)) {
      throw invalidParam(`status: must be one of ${CAMPAIGN_STATUSES.join(', ')}`);
    }
    filters.status = query.status as CampaignStatus;
  }
  if (query.decline_category !== undefined) {
    if (!(DECLINE_CATEGORIES as readonly string[]).includes(query.decline_category)) {
      throw invalidParam(`decline_category: must be one of ${DECLINE_CATEGORIES.join(', ')}`);
    }
    filters.decline_category = query.decline_category as DeclineCategory;
  }
  if (query.from !== undefined) filters.from = parseInstant('from', query.from);
  if (query.to !== undefined) filters.to = parseInstant('to', query.to);
  if (query.q !== undefined) {
    if (query.q.length < 1 || query.q.length > 320) throw invalidParam('q: must be 1 to 320 characters');
    filters.q = query.q;
  }
  return filters;
}

export function campaignExportQuery(
  db: Queryable,
  workspaceId: string,
  filters: CampaignExportFilters,
): Knex.QueryBuilder {
  const query = db('recovery_campaigns as k')
    .join('customers as c', function joinCustomer() {
      this.on('c.workspace_id', 'k.workspace_id').andOn('c.id', 'k.customer_id');
    })
    .where('k.workspace_id', workspaceId)
    .orderBy([
      { column: 'k.first_failed_at', order: 'desc' },
      { column: 'k.id', order: 'desc' },
    ])
    .select(
      'k.id',
      'k.psp_invoice_id',
      'k.customer_id',
      'c.email as customer_email',
      'k.subscription_id',
      db.raw('k.amount_cents::text AS amount_cents'),
      'k.currency',
      'k.status',
      'k.decline_code',
      'k.decline_category',
      'k.recovered_via',
      'k.first_failed_at',
      'k.recovered_at',
      'k.closed_at',
    );
  if (filters.status) query.where('k.status', filters.status);
  if (filters.decline_category) query.where('k.decline_category', filters.decline_category);
  if (filters.from) query.where('k.first_failed_at', '>=', filters.from);
  if (filters.to) query.where('k.first_failed_at', '<', filters.to);
  if (filters.q !== undefined) {
    const q = filters.q;
    query.where(function invoiceOrEmail() {
      void this.where('k.psp_invoice_id', q).orWhere('c.email', q);
    });
  }
  return query;
}
