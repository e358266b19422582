import type { Customer, ListEnvelope } from '@retention/core';
import { SEARCH_MIN_CHARACTERS } from '@retention/core/search';
import type { Knex } from 'knex';
import type { Queryable } from '../connection.js';
import { customerJsonSql, type JsonText } from '../resource-json.js';
import { containsPattern, keysetSorts, searchParam, textParam, type RowShape } from './list-params.js';
import { keysetColumns, listScope, opaqueKeysetPage } from './opaque-keyset.js';
import { countEnvelope, countMatching, listEnvelope, wholeListTotal } from './pagination.js';

/**
 * The dashboard's customers list and its CSV export (docs/dashboard-api.md, "Data pages" and
 * "Insights"): one filter parser and one query, newest first by (created_at, id), filtered by
 * an exact email (case-insensitive, customers_email_idx), a tag (stored lowercase) or a search
 * (`q`, part of the email or name, customers_search_idx), keyset pages through
 * customers_list_idx. The list is a keyset page of the query; the export reads all of it in
 * keyset pages (insights-export.ts in services/api).
 */

export interface CustomerListFilters {
  email?: string;
  tag?: string;
  /** A whole email address, or part of the email or name, any case (customerSearchMatch). */
  q?: string;
  /** The order, when not the default (sortParam; CampaignListFilters.sort says why it is here). */
  sort?: CustomerSort;
}

export const CUSTOMER_FILTER_PARAMS = ['email', 'tag', 'q', 'sort'] as const;

/**
 * The customers list's orders (docs/dashboard-api.md, "Sorting"): newest or oldest first, both
 * through customers_list_idx. Not by email: a customer is found by searching, and the addresses'
 * order would need an index of its own and a cursor holding a 320-character address.
 */
export const CUSTOMER_SORTS = keysetSorts({ created_at: [{ column: 'created_at', kind: 'timestamp' }] }, '-created_at');

type CustomerSort = keyof typeof CUSTOMER_SORTS.orders;

/**
 * The text a search (`q`) is looked for in: the email and the name, lowercase. Exactly the
 * expression of customers_search_idx (migration 0024), so the planner can use it; `alias` is the
 * customers table's name in the query.
 */
export function customerSearchText(alias = 'customers'): string {
  return `lower(${alias}.email || ' ' || coalesce(${alias}.name, ''))`;
}

/**
 * A whole email address, as a support person pastes one: searched for exactly, through
 * customers_email_idx, rather than as part of a longer one. As a substring it read the trigram
 * index's posting lists of every piece it shares with other addresses (a common domain: all of
 * them), 31 to 36 ms a look-up and 44 to 57 requests a second on the campaigns list under load,
 * where the exact match serves about 1,100 (docs/performance.md, "Dashboard search").
 */
const WHOLE_ADDRESS = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/** An address as a mail client copies it: `<ann@example.com>`, or `Ann Lee <ann@example.com>`. */
const BRACKETED_ADDRESS = /<([^\s@<>]+@[^\s@<>]+\.[^\s@<>]+)>/;

/**
 * What separates the words of a search: spaces, and the commas, semicolons, double quotes and
 * brackets of a name as it is pasted ("Lee, Ann", `"Ann Lee"`); not an apostrophe (O'Brien).
 */
const WORD_SEPARATORS = /[\s,;"()<>]+/;

/**
 * The condition a search (`q`) puts on the customers table (the alias's) and its bindings:
 * - the email equal to a whole address, any case (an address in angle brackets, as a mail
 *   client copies it, counts as one: the name beside it is not searched);
 * - else every word of `q` found somewhere in the email or name, any case, literally, so that
 *   "Lee Ann", "Lee, Ann" and "Ann  Lee" find Ann Lee as "ann lee" does;
 * - else, when no word is long enough for the index to look up ("0% c"), `q` as it is.
 */
export function customerSearchMatch(q: string, alias = 'customers'): [sql: string, bindings: string[]] {
  const address = BRACKETED_ADDRESS.exec(q)?.[1] ?? (WHOLE_ADDRESS.test(q) ? q : undefined);
  if (address !== undefined) return [`lower(${alias}.email) = lower(?)`, [address]];
  const words = q.split(WORD_SEPARATORS).filter((word) => word !== '');
  const searched = words.some((word) => word.length >= SEARCH_MIN_CHARACTERS) ? words : [q];
  return [
    searched.map(() => `${customerSearchText(alias)} LIKE lower(?)`).join(' AND '),
    searched.map(containsPattern),
  ];
}

/**
 * The CSV export's columns, in order: the API's customer, nothing else (`updated_at` is the
 * row's bookkeeping, shown nowhere). `tags` is one cell, the tags in their stored order joined
 * by CUSTOMER_EXPORT_TAG_SEPARATOR.
 */
export const CUSTOMER_EXPORT_COLUMNS = ['id', 'psp_customer_id', 'email', 'name', 'tags', 'created_at'] as const;

/** Between a customer's tags in the export's `tags` cell (docs/dashboard-api.md, "Insights"). */
export const CUSTOMER_EXPORT_TAG_SEPARATOR = '; ';

export function customerListFilters(
  query: Partial<Record<(typeof CUSTOMER_FILTER_PARAMS)[number], string>>,
): CustomerListFilters {
  const filters: CustomerListFilters = {};
  if (query.email !== undefined) {
    filters.email = textParam('email', query.email, 320);
  }
  if (query.tag !== undefined) {
    filters.tag = textParam('tag', query.tag.trim().toLowerCase(), 100);
  }
  if (query.q !== undefined) filters.q = searchParam('q', query.q);
  const sort = CUSTOMER_SORTS.param(query.sort);
  if (sort !== undefined) filters.sort = sort;
  return filters;
}

/**
 * The filtered customers, unordered (opaqueKeysetPage reads them in the filters' order,
 * CUSTOMER_SORTS): as the export's columns (tags joined into one text), or as the list row's JSON
 * built by Postgres beside the keyset columns.
 */
export function customerListQuery(
  db: Queryable,
  workspaceId: string,
  filters: CustomerListFilters,
  shape: RowShape = 'columns',
): Knex.QueryBuilder {
  const query = db('customers')
    .where('workspace_id', workspaceId)
    .select(
      shape === 'json'
        ? [
            ...keysetColumns(CUSTOMER_SORTS.order(filters), 'id'),
            db.raw(`${customerJsonSql('customers')}::text AS json`),
          ]
        : CUSTOMER_EXPORT_COLUMNS.map((column) =>
            column === 'tags' ? db.raw('array_to_string(tags, ?) AS tags', [CUSTOMER_EXPORT_TAG_SEPARATOR]) : column,
          ),
    );
  if (filters.email !== undefined) query.whereRaw('lower(email) = lower(?)', [filters.email]);
  if (filters.tag !== undefined) query.whereRaw('tags @> ARRAY[?]::text[]', [filters.tag]);
  if (filters.q !== undefined) {
    const [match, bindings] = customerSearchMatch(filters.q);
    query.whereRaw(match, bindings);
  }
  return query;
}

export async function customerListPage(
  db: Queryable,
  workspaceId: string,
  filters: CustomerListFilters,
  page: { limit: number; cursor?: string | undefined },
): Promise<JsonText<ListEnvelope<Customer>>> {
  const result = await opaqueKeysetPage<{ id: string; json: string }>(
    customerListQuery(db, workspaceId, filters, 'json'),
    {
      order: CUSTOMER_SORTS.order(filters),
      cursor: page.cursor,
      limit: page.limit,
      scope: listScope('customers', filters),
      sorted: true,
    },
  );
  return listEnvelope(result, wholeListTotal(result, page.cursor));
}

/** How many match the filters, at most 1,000 counted (the list's count route). */
export async function customerListCount(
  db: Queryable,
  workspaceId: string,
  filters: CustomerListFilters,
): Promise<JsonText<unknown>> {
  return countEnvelope(await countMatching(db, customerListQuery(db, workspaceId, filters)));
}
