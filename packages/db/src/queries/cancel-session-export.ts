import {
  CANCEL_OUTCOMES,
  CANCEL_REASON_CODES,
  invalidParam,
  type CancelOutcome,
  type CancelReasonCode,
} from '@retention/core';
import type { Knex } from 'knex';
import type { Queryable } from '../connection.js';

/** The rows of a cancel sessions CSV export, newest first, for the caller to stream. */

export interface CancelSessionExportFilters {
  outcome?: CancelOutcome;
  reason_code?: CancelReasonCode;
}

export const CANCEL_SESSION_EXPORT_COLUMNS = [
  'id',
  'customer_id',
  'customer_email',
  'subscription_id',
  'outcome',
  'reason_code',
  'feedback',
  'monthly_mrr_cents',
  'currency',
  'created_at',
  'ended_at',
] as const;

export function cancelSessionExportFilters(
  query: Partial<Record<keyof CancelSessionExportFilters, string>>,
): CancelSessionExportFilters {
  const filters: CancelSessionExportFilters = {};
  if (query.outcome !== undefined) {
    if (!(CANCEL_OUTCOMES as readonly string[]).includes(query.outcome)) {
      throw invalidParam(`outcome: must be one of ${CANCEL_OUTCOMES.join(', ')}`);
    }
    filters.outcome = query.outcome as CancelOutcome;
  }
  if (query.reason_code !== undefined) {
    if (!(CANCEL_REASON_CODES as readonly string[]).includes(query.reason_code)) {
      throw invalidParam(`reason_code: must be one of ${CANCEL_REASON_CODES.join(', ')}`);
    }
    filters.reason_code = query.reason_code as CancelReasonCode;
  }
  return filters;
}

export function cancelSessionExportQuery(
  db: Queryable,
  workspaceId: string,
  filters: CancelSessionExportFilters,
): Knex.QueryBuilder {
  const query = db('cancel_sessions as s')
    .join('customers as c', function joinCustomer() {
      this.on('c.workspace_id', 's.workspace_id').andOn('c.id', 's.customer_id');
    })
    .where('s.workspace_id', workspaceId)
    .orderBy([
      { column: 's.created_at', order: 'desc' },
      { column: 's.id', order: 'desc' },
    ])
    .select(
      's.id',
      's.customer_id',
      'c.email as customer_email',
      's.subscription_id',
      's.outcome',
      's.reason_code',
      's.feedback',
      db.raw('s.monthly_mrr_cents::text AS monthly_mrr_cents'),
      's.currency',
      's.created_at',
      's.ended_at',
    );
  if (filters.outcome) query.where('s.outcome', filters.outcome);
  if (filters.reason_code) query.where('s.reason_code', filters.reason_code);
  return query;
}
