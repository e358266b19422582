import {
  CAMPAIGN_STATUSES,
  DECLINE_CATEGORIES,
  invalidField,
  type CampaignStatus,
  type DeclineCategory,
  type ListEnvelope,
} from '@retention/core';
import type { Knex } from 'knex';
import type { Queryable } from '../connection.js';
import type { CampaignListRow } from '../dashboard-views.js';
import { campaignJsonSql, type JsonText } from '../resource-json.js';
import { customerSearchMatch } from './customer-list.js';
import {
  amountParam,
  currencyParam,
  exportColumnSql,
  instantParam,
  keysetSorts,
  prefixPattern,
  searchParam,
  type RowShape,
} from './list-params.js';
import { keysetColumns, listScope, opaqueKeysetPage } from './opaque-keyset.js';
import { countEnvelope, countMatching, listEnvelope, wholeListTotal } from './pagination.js';

/**
 * The dashboard's campaigns list and its CSV export (docs/dashboard-api.md, "Data pages" and
 * "Insights"): one filter parser and one query. The list is a keyset page of the query; the
 * export reads all of it in keyset pages (insights-export.ts in services/api), so a million rows
 * pass through without being held. Newest first by (first_failed_at, id) unless `sort` says
 * otherwise (CAMPAIGN_SORTS).
 */

/**
 * The campaigns list's orders (docs/dashboard-api.md, "Sorting"), each served by an index scanned
 * either way: by first failure (recovery_campaigns_list_idx), or by amount within currency
 * (recovery_campaigns_amount_idx, 0043). Amounts are in each currency's minor units, so they
 * compare only within one currency: ¥1,000 is 1000 and $10.00 is 1000 too. The amount order is
 * (currency, amount, id), all one direction: largest first is the currencies Z to A (usd, jpy,
 * eur), each largest first; smallest first the reverse. Converting with the FX table would
 * compare across currencies, but its rates change, so no index can hold that order and every
 * first page would sort the whole workspace.
 */
export const CAMPAIGN_SORTS = keysetSorts(
  {
    first_failed_at: [{ column: 'k.first_failed_at', kind: 'timestamp' }],
    amount: [
      { column: 'k.currency', kind: 'text' },
      { column: 'k.amount_cents', kind: 'integer' },
    ],
  },
  '-first_failed_at',
);

export type CampaignSort = keyof typeof CAMPAIGN_SORTS.orders;

export interface CampaignListFilters {
  status?: CampaignStatus;
  decline_category?: DeclineCategory;
  /** first_failed_at >= from */
  from?: Date;
  /** first_failed_at < to */
  to?: Date;
  /**
   * An invoice id or its start (INVOICE_PREFIX), or a customer's whole email or part of their
   * email or name (as the customers list's q).
   */
  q?: string;
  /** The campaigns in this currency (a lowercase ISO 4217 code). */
  currency?: string;
  /**
   * amount_cents >= min_amount and <= max_amount, in `currency`'s minor units (given only with
   * it): the digits of an integer up to 2^63 − 1 (amountParam), bound as text for the bigint.
   */
  min_amount?: string;
  max_amount?: string;
  /**
   * The order, when not the default (sortParam): part of the filters so that it is part of the
   * cursor's scope, and the export has the list's order. The count ignores it.
   */
  sort?: CampaignSort;
}

/**
 * A search that can be the start of an invoice id: `in_` (Stripe's) and at least 4 more
 * characters, no space. Such a search finds the invoices whose id starts with it, exactly as
 * typed (ids are case-sensitive), through recovery_campaigns_invoice_prefix_idx (0042); any
 * other finds an invoice id only whole. Four: `in_` alone, or one to three characters after it,
 * is the start of most invoices of a workspace (every Stripe id starts `in_1`), which says nothing
 * and reads them all.
 */
const INVOICE_PREFIX = /^in_\S{4,}$/;

/** The query parameters the filters come from (besides a list's `limit` and `cursor`). */
export const CAMPAIGN_FILTER_PARAMS = [
  'status',
  'decline_category',
  'from',
  'to',
  'q',
  'currency',
  'min_amount',
  'max_amount',
  'sort',
] as const;

/**
 * The CSV export's columns, in order: the campaign's own (`k`), its customer's email and name,
 * and `amount`, the amount in major units (19.00 for 1900 usd cents, 2500 for 2500 jpy), which
 * a spreadsheet sums as money where `amount_cents` needs a rule per currency.
 */
export const CAMPAIGN_EXPORT_COLUMNS = [
  'id',
  'psp_invoice_id',
  'customer_id',
  'customer_email',
  'customer_name',
  'subscription_id',
  'amount_cents',
  'amount',
  'currency',
  'status',
  'decline_code',
  'decline_category',
  'recovered_via',
  'first_failed_at',
  'recovered_at',
  'closed_at',
] as const;

/** Validates the query strings of the campaigns list or export. */
export function campaignListFilters(
  query: Partial<Record<(typeof CAMPAIGN_FILTER_PARAMS)[number], string>>,
): CampaignListFilters {
  const filters: CampaignListFilters = {};
  if (query.status !== undefined) {
    if (!(CAMPAIGN_STATUSES as readonly string[]).includes(query.status)) {
      throw invalidField('status', `must be one of ${CAMPAIGN_STATUSES.join(', ')}`);
    }
    filters.status = query.status as CampaignStatus;
  }
  if (query.decline_category !== undefined) {
    if (!(DECLINE_CATEGORIES as readonly string[]).includes(query.decline_category)) {
      throw invalidField('decline_category', `must be one of ${DECLINE_CATEGORIES.join(', ')}`);
    }
    filters.decline_category = query.decline_category as DeclineCategory;
  }
  if (query.from !== undefined) filters.from = instantParam('from', query.from);
  if (query.to !== undefined) filters.to = instantParam('to', query.to);
  if (query.q !== undefined) filters.q = searchParam('q', query.q);
  Object.assign(filters, amountFilters(query));
  const sort = CAMPAIGN_SORTS.param(query.sort);
  if (sort !== undefined) filters.sort = sort;
  return filters;
}

/**
 * `currency`, `min_amount` and `max_amount` (docs/dashboard-api.md, "Amounts filter within
 * currency"). Amounts are in each currency's minor units, so an amount alone says nothing
 * (1000 is ¥1,000 and $10.00): it is refused without `currency`, never compared across
 * currencies. Both bounds inclusive; a minimum above the maximum is refused rather than an empty
 * list, since it is a slip (the bounds swapped), where an empty day range can be meant.
 */
function amountFilters(
  query: Partial<Record<'currency' | 'min_amount' | 'max_amount', string>>,
): Pick<CampaignListFilters, 'currency' | 'min_amount' | 'max_amount'> {
  const filters: Pick<CampaignListFilters, 'currency' | 'min_amount' | 'max_amount'> = {};
  if (query.currency !== undefined) filters.currency = currencyParam('currency', query.currency);
  for (const name of ['min_amount', 'max_amount'] as const) {
    const value = query[name];
    if (value === undefined) continue;
    filters[name] = amountParam(name, value);
    if (filters.currency === undefined) {
      throw invalidField(
        name,
        'amounts compare only within one currency (1000 is ¥1,000 in jpy and $10.00 in usd): give currency too',
      );
    }
  }
  if (filters.min_amount !== undefined && filters.max_amount !== undefined) {
    if (BigInt(filters.min_amount) > BigInt(filters.max_amount)) {
      throw invalidField('min_amount', 'must not be more than max_amount');
    }
  }
  return filters;
}

/**
 * How a search (`q`) reaches the customers it matches: their ids, when at most
 * CAMPAIGN_SEARCH_CUSTOMER_IDS match, or `many`. Looked up before the list's query
 * (campaignSearchCustomers), since no one plan serves both:
 * - a few customers (`jane doe`): their ids, found through customers_search_idx, are a bitmap OR
 *   with the invoice key over recovery_campaigns_customer_idx; the campaigns are a few hundred
 *   rows, sorted;
 * - many (`gmail`, a domain every customer shares): the same read of a million campaigns'
 *   customer index, then a sort, took 8.9 s on the API bench (bench/insights.ts); instead the
 *   list index is walked newest first and each campaign's customer tested, which stops at the page.
 */
export type CampaignSearchCustomers = { ids: string[] } | 'many';

/**
 * Past this many customers matched, a campaigns search walks the list (CampaignSearchCustomers).
 * At 1,000, a search matching 1,111 customers, all among the oldest (`er199` on the bench),
 * walked most of a million campaigns: 2.4 s a request at 50 connections. Their 5,555 campaigns by
 * id take 91 ms. Every search that matches many pays for reading this many ids first (at 5,000,
 * `@bench`, which every customer matches, fell from 248 to 146 requests a second), hence not more
 * (docs/performance.md, "Dashboard search").
 */
export const CAMPAIGN_SEARCH_CUSTOMER_IDS = 2000;

/** The customers a campaigns search (`filters.q`) matches, as campaignListQuery takes them. */
export async function campaignSearchCustomers(
  db: Queryable,
  workspaceId: string,
  filters: CampaignListFilters,
): Promise<CampaignSearchCustomers | undefined> {
  if (filters.q === undefined) return undefined;
  const [match, bindings] = customerSearchMatch(filters.q, 'e');
  const ids = (await db('customers as e')
    .where('e.workspace_id', workspaceId)
    .whereRaw(match, bindings)
    .limit(CAMPAIGN_SEARCH_CUSTOMER_IDS + 1)
    .pluck('e.id')) as string[];
  return ids.length > CAMPAIGN_SEARCH_CUSTOMER_IDS ? 'many' : { ids };
}

/**
 * The filtered campaigns with their customer's email, unordered (opaqueKeysetPage reads them in
 * the filters' order, CAMPAIGN_SORTS): as columns (the export), or as the list row's JSON built by
 * Postgres (the list page, whose rows are written as they come, as /api/v1 does) beside the keyset
 * columns. Every filter is served by an index: status by recovery_campaigns_status_idx,
 * decline_category by recovery_campaigns_category_idx (0014), from/to by the range of the list index,
 * currency and amounts by the range of recovery_campaigns_amount_idx (0043), q's invoice id
 * by the unique key, or its start by recovery_campaigns_invoice_prefix_idx (0042), and q's customers as
 * `customers` says (campaignSearchCustomers, CampaignSearchCustomers): the matched customers' ids
 * in a bitmap OR of the invoice key and the customer index, or, when many match (or `customers`
 * is not given), the list index walked with the search tested on each campaign's customer.
 */
export function campaignListQuery(
  db: Queryable,
  workspaceId: string,
  filters: CampaignListFilters,
  /** Or `count`: only what the filters need, unordered (the list's count route). */
  shape: RowShape | 'count' = 'columns',
  customers: CampaignSearchCustomers = 'many',
): Knex.QueryBuilder {
  const query = db('recovery_campaigns as k').where('k.workspace_id', workspaceId);
  // A count reads the customer only to search it: every campaign has one (a foreign key), so the
  // join drops no row, and without it counting 1,001 campaigns is 1,001 fewer index look-ups.
  if (shape !== 'count' || (filters.q !== undefined && customers === 'many')) {
    query.join('customers as c', function joinCustomer() {
      this.on('c.workspace_id', 'k.workspace_id').andOn('c.id', 'k.customer_id');
    });
  }
  if (shape === 'count') query.select(db.raw('1'));
  else {
    query.select(
      shape === 'json'
        ? [
            ...keysetColumns(CAMPAIGN_SORTS.order(filters), 'k.id'),
            db.raw(`${campaignJsonSql('k', [['customer_email', 'c.email']])}::text AS json`),
          ]
        : CAMPAIGN_EXPORT_COLUMNS.map((column) =>
            exportColumnSql(db, 'k', column, { column: 'amount', cents: 'amount_cents' }),
          ),
    );
  }
  if (filters.status) query.where('k.status', filters.status);
  if (filters.decline_category) query.where('k.decline_category', filters.decline_category);
  if (filters.from) query.where('k.first_failed_at', '>=', filters.from);
  if (filters.to) query.where('k.first_failed_at', '<', filters.to);
  if (filters.currency !== undefined) query.where('k.currency', filters.currency);
  if (filters.min_amount !== undefined) query.where('k.amount_cents', '>=', filters.min_amount);
  if (filters.max_amount !== undefined) query.where('k.amount_cents', '<=', filters.max_amount);
  if (filters.q !== undefined) {
    const q = filters.q;
    const [match, bindings] = customerSearchMatch(q, 'c');
    query.where(function invoiceOrCustomer() {
      if (INVOICE_PREFIX.test(q)) void this.whereRaw('k.psp_invoice_id LIKE ?', [prefixPattern(q)]);
      else void this.where('k.psp_invoice_id', q);
      if (customers === 'many') void this.orWhereRaw(`(${match})`, bindings);
      else void this.orWhereRaw('k.customer_id = ANY (?::uuid[])', [customers.ids]);
    });
  }
  return query;
}

/**
 * One page of the campaigns list: `limit` rows after `cursor` (a next_cursor of the same filters);
 * a first page that is the whole list with its count (wholeListTotal); campaignListCount counts the rest.
 */
export async function campaignListPage(
  db: Queryable,
  workspaceId: string,
  filters: CampaignListFilters,
  page: { limit: number; cursor?: string | undefined },
): Promise<JsonText<ListEnvelope<CampaignListRow>>> {
  const customers = await campaignSearchCustomers(db, workspaceId, filters);
  const result = await opaqueKeysetPage<{ id: string; json: string }>(
    campaignListQuery(db, workspaceId, filters, 'json', customers),
    {
      order: CAMPAIGN_SORTS.order(filters),
      idColumn: 'k.id',
      cursor: page.cursor,
      limit: page.limit,
      scope: listScope('campaigns', filters),
      sorted: true,
    },
  );
  return listEnvelope(result, wholeListTotal(result, page.cursor));
}

/** How many campaigns the filters match, at most 1,000 counted (the list's count route). */
export async function campaignListCount(
  db: Queryable,
  workspaceId: string,
  filters: CampaignListFilters,
): Promise<JsonText<unknown>> {
  const customers = await campaignSearchCustomers(db, workspaceId, filters);
  return countEnvelope(await countMatching(db, campaignListQuery(db, workspaceId, filters, 'count', customers)));
}
