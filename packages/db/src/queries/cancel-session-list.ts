import {
  CANCEL_OUTCOMES,
  CANCEL_REASON_CODES,
  invalidField,
  type CancelOutcome,
  type CancelReasonCode,
  type ListEnvelope,
} from '@retention/core';
import type { Knex } from 'knex';
import type { Queryable } from '../connection.js';
import type { CancelSessionListRow } from '../dashboard-views.js';
import { cancelSessionJsonSql, type JsonText } from '../resource-json.js';
import { customerSearchMatch } from './customer-list.js';
import { exportColumnSql, instantParam, keysetSorts, searchParam, type RowShape } from './list-params.js';
import { keysetColumns, listScope, opaqueKeysetPage } from './opaque-keyset.js';
import { countEnvelope, countMatching, listEnvelope, wholeListTotal } from './pagination.js';

/**
 * The dashboard's cancel sessions list and its CSV export: one filter parser and one query,
 * newest first by (created_at, id) unless `sort` says otherwise (CANCEL_SESSION_SORTS). The list
 * is a keyset page of it; the export reads all of it in keyset pages.
 * outcome, reason_code and one customer's sessions each have their (workspace_id, filter,
 * created_at DESC, id DESC) index (0004, 0014); from/to are a range of whichever is read. A
 * search (`q`, as the customers list's) joins the customers: the planner finds the few matched
 * through customers_search_idx and their sessions through cancel_sessions_customer_idx, or, when
 * many match, walks the list and tests each session's customer, stopping at the page
 * (docs/performance.md, "Cancel session filters and invoice prefixes").
 */

export interface CancelSessionListFilters {
  outcome?: CancelOutcome;
  reason_code?: CancelReasonCode;
  /** created_at >= from */
  from?: Date;
  /** created_at < to */
  to?: Date;
  /** A customer's whole email, or part of their email or name (as the customers list's q). */
  q?: string;
  /** The order, when not the default (sortParam; CampaignListFilters.sort says why it is here). */
  sort?: CancelSessionSort;
}

/** The query parameters the filters come from (besides a list's `limit` and `cursor`). */
export const CANCEL_SESSION_FILTER_PARAMS = ['outcome', 'reason_code', 'from', 'to', 'q', 'sort'] as const;

/**
 * The cancel sessions list's orders (docs/dashboard-api.md, "Sorting"): by when each started
 * (cancel_sessions_list_idx), or by monthly MRR within currency (cancel_sessions_mrr_idx, 0043),
 * as the campaigns' amount (CAMPAIGN_SORTS says why within currency).
 */
export const CANCEL_SESSION_SORTS = keysetSorts(
  {
    created_at: [{ column: 's.created_at', kind: 'timestamp' }],
    monthly_mrr: [
      { column: 's.currency', kind: 'text' },
      { column: 's.monthly_mrr_cents', kind: 'integer' },
    ],
  },
  '-created_at',
);

type CancelSessionSort = keyof typeof CANCEL_SESSION_SORTS.orders;

/**
 * The CSV export's columns, in order: the session's own (`s`), its customer's email and name, and
 * `monthly_mrr`, the MRR in major units (as the campaigns export's `amount`).
 */
export const CANCEL_SESSION_EXPORT_COLUMNS = [
  'id',
  'customer_id',
  'customer_email',
  'customer_name',
  'subscription_id',
  'outcome',
  'reason_code',
  'feedback',
  'monthly_mrr_cents',
  'monthly_mrr',
  'currency',
  'created_at',
  'ended_at',
] as const;

export function cancelSessionListFilters(
  query: Partial<Record<(typeof CANCEL_SESSION_FILTER_PARAMS)[number], string>>,
): CancelSessionListFilters {
  const filters: CancelSessionListFilters = {};
  if (query.outcome !== undefined) {
    if (!(CANCEL_OUTCOMES as readonly string[]).includes(query.outcome)) {
      throw invalidField('outcome', `must be one of ${CANCEL_OUTCOMES.join(', ')}`);
    }
    filters.outcome = query.outcome as CancelOutcome;
  }
  if (query.reason_code !== undefined) {
    if (!(CANCEL_REASON_CODES as readonly string[]).includes(query.reason_code)) {
      throw invalidField('reason_code', `must be one of ${CANCEL_REASON_CODES.join(', ')}`);
    }
    filters.reason_code = query.reason_code as CancelReasonCode;
  }
  if (query.from !== undefined) filters.from = instantParam('from', query.from);
  if (query.to !== undefined) filters.to = instantParam('to', query.to);
  if (query.q !== undefined) filters.q = searchParam('q', query.q);
  const sort = CANCEL_SESSION_SORTS.param(query.sort);
  if (sort !== undefined) filters.sort = sort;
  return filters;
}

/**
 * The filtered sessions with their customer's email, unordered (opaqueKeysetPage reads them in the
 * filters' order, CANCEL_SESSION_SORTS): as the export's columns, or as the list row's JSON beside
 * the keyset columns.
 */
export function cancelSessionListQuery(
  db: Queryable,
  workspaceId: string,
  filters: CancelSessionListFilters,
  /** Or `count`: only what the filters need, unordered (the list's count route). */
  shape: RowShape | 'count' = 'columns',
): Knex.QueryBuilder {
  const query = db('cancel_sessions as s').where('s.workspace_id', workspaceId);
  if (filters.outcome) query.where('s.outcome', filters.outcome);
  if (filters.reason_code) query.where('s.reason_code', filters.reason_code);
  if (filters.from) query.where('s.created_at', '>=', filters.from);
  if (filters.to) query.where('s.created_at', '<', filters.to);
  // A count reads the customer only to search it: every session has one (a foreign key), so the
  // join drops no row.
  if (shape !== 'count' || filters.q !== undefined) {
    query.join('customers as c', function joinCustomer() {
      this.on('c.workspace_id', 's.workspace_id').andOn('c.id', 's.customer_id');
    });
  }
  if (filters.q !== undefined) {
    const [match, bindings] = customerSearchMatch(filters.q, 'c');
    query.whereRaw(`(${match})`, bindings);
  }
  if (shape === 'count') return query.select(db.raw('1'));
  return query.select(
    shape === 'json'
      ? [
          ...keysetColumns(CANCEL_SESSION_SORTS.order(filters), 's.id'),
          db.raw(`${cancelSessionJsonSql('s', [['customer_email', 'c.email']])}::text AS json`),
        ]
      : CANCEL_SESSION_EXPORT_COLUMNS.map((column) =>
          exportColumnSql(db, 's', column, { column: 'monthly_mrr', cents: 'monthly_mrr_cents' }),
        ),
  );
}

export async function cancelSessionListPage(
  db: Queryable,
  workspaceId: string,
  filters: CancelSessionListFilters,
  page: { limit: number; cursor?: string | undefined },
): Promise<JsonText<ListEnvelope<CancelSessionListRow>>> {
  const result = await opaqueKeysetPage<{ id: string; json: string }>(
    cancelSessionListQuery(db, workspaceId, filters, 'json'),
    {
      order: CANCEL_SESSION_SORTS.order(filters),
      idColumn: 's.id',
      cursor: page.cursor,
      limit: page.limit,
      scope: listScope('cancel_sessions', filters),
      sorted: true,
    },
  );
  return listEnvelope(result, wholeListTotal(result, page.cursor));
}

/** How many match the filters, at most 1,000 counted (the list's count route). */
export async function cancelSessionListCount(
  db: Queryable,
  workspaceId: string,
  filters: CancelSessionListFilters,
): Promise<JsonText<unknown>> {
  return countEnvelope(await countMatching(db, cancelSessionListQuery(db, workspaceId, filters, 'count')));
}
