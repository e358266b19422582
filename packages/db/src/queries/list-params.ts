import {
  CONTROL_CHARACTER,
  CURRENCY_PATTERN,
  invalidField,
  isMinorUnits,
  MAX_STORED_AMOUNT,
  parseTimestamp,
} from '@retention/core';
import { SEARCH_MAX_CHARACTERS, SEARCH_MIN_CHARACTERS, SEARCH_TOO_SHORT } from '@retention/core/search';
import type { Knex } from 'knex';
import type { Queryable } from '../connection.js';
import { majorUnitsSql } from '../resource-json.js';
import type { KeysetKey, KeysetOrder } from './opaque-keyset.js';

/** Query parameters the dashboard's lists share (docs/dashboard-api.md, "Data pages"). */

/** How a list query returns its rows: columns, or each row's JSON as Postgres built it. */
export type RowShape = 'columns' | 'json';

export const DEFAULT_PAGE_LIMIT = 50;
export const MAX_PAGE_LIMIT = 100;

/** `limit` (1–100, default 50) and `cursor` of a dashboard list, as the query string gave them. */
export function pageParams(query: { limit?: string | undefined; cursor?: string | undefined }): {
  limit: number;
  cursor: string | undefined;
} {
  let limit = DEFAULT_PAGE_LIMIT;
  if (query.limit !== undefined) {
    limit = /^\d{1,3}$/.test(query.limit) ? Number(query.limit) : 0;
    if (limit < 1 || limit > MAX_PAGE_LIMIT)
      throw invalidField('limit', `must be an integer from 1 to ${MAX_PAGE_LIMIT}`);
  }
  return { limit, cursor: query.cursor };
}

/**
 * A time filter (`from`, `to`): the service's one reading of a timestamp (`parseTimestamp`), an
 * ISO 8601 date (midnight UTC) or timestamp; impossible dates refused too.
 */
export function instantParam(name: string, value: string): Date {
  const millis = parseTimestamp(value);
  if (millis === null) throw invalidField(name, 'must be an ISO 8601 date or timestamp');
  return new Date(millis);
}

/** A free-text filter: 1 to `max` characters, no control characters (Postgres text holds no NUL). */
export function textParam(name: string, value: string, max: number): string {
  if (value.length < 1 || value.length > max) throw invalidField(name, `must be 1 to ${max} characters`);
  if (CONTROL_CHARACTER.test(value)) throw invalidField(name, 'must not contain control characters');
  return value;
}

/**
 * A currency filter: a 3-letter ISO 4217 code in any case (`usd`, `JPY`, as people and Stripe's
 * pages write them), lowercased, as amounts' currencies are stored: the filter, the cursor's
 * scope and the export all see the one code, so `USD` and `usd` are one list.
 */
export function currencyParam(name: string, value: string): string {
  const code = value.toLowerCase();
  if (!CURRENCY_PATTERN.test(code)) throw invalidField(name, 'must be a 3-letter ISO 4217 code, such as usd');
  return code;
}

/**
 * An amount filter (`min_amount`, `max_amount`): an integer in the currency's minor units, as
 * `amount_cents` is, written in digits without leading zeros, 0 to MAX_STORED_AMOUNT. Kept as its
 * digits: past 2^53 a JavaScript number is not exact, and the cursor's scope is JSON.
 */
export function amountParam(name: string, value: string): string {
  if (!isMinorUnits(value)) {
    throw invalidField(name, `must be an integer from 0 to ${MAX_STORED_AMOUNT}, in the currency's minor units`);
  }
  return value;
}

/**
 * A search by part of a value (`q`): trimmed, then 3 to 320 characters without control
 * characters. Under 3 there is no trigram to look up (pg_trgm), so the search would read every
 * row of the workspace: refused with a sentence a page can show as it is.
 */
export function searchParam(name: string, value: string): string {
  const text = value.trim();
  if (CONTROL_CHARACTER.test(text)) throw invalidField(name, 'must not contain control characters');
  if (text.length < SEARCH_MIN_CHARACTERS) throw invalidField(name, SEARCH_TOO_SHORT);
  if (text.length > SEARCH_MAX_CHARACTERS) {
    throw invalidField(name, `must be at most ${SEARCH_MAX_CHARACTERS} characters`);
  }
  return text;
}

/**
 * A LIKE pattern finding `text` anywhere, its `%`, `_` and `\` matched literally (LIKE's
 * escape character is `\`). Lowercased by the query (lower(?)), as the searched text is.
 */
export function containsPattern(text: string): string {
  return `%${likeLiteral(text)}%`;
}

/** A LIKE pattern finding values that start with `text`, its `%`, `_` and `\` matched literally. */
export function prefixPattern(text: string): string {
  return `${likeLiteral(text)}%`;
}

/** `text` in a LIKE pattern as itself: `%`, `_` and LIKE's escape character `\` escaped. */
function likeLiteral(text: string): string {
  return text.replace(/[\\%_]/g, (character) => `\\${character}`);
}

/** A sort's name: a column's name ascending, `-` before it descending (`amount`, `-amount`). */
export type SortName<Column extends string> = Column | `-${Column}`;

/** A list's sorts (keysetSorts): the orders by name, the default, and how to read and apply them. */
export interface KeysetSorts<Column extends string> {
  orders: Readonly<Record<SortName<Column>, KeysetOrder>>;
  /** The list's order without a `sort`. */
  fallback: SortName<Column>;
  /** The `sort` query parameter as the filters hold it (sortParam). */
  param: (value: string | undefined) => SortName<Column> | undefined;
  /** The order of a list's filters: their sort's, else the default's. */
  order: (filters: { sort?: SortName<Column> | undefined }) => KeysetOrder;
}

/**
 * A list's sorts (docs/dashboard-api.md, "Sorting") from each sortable column's keys: the
 * column's name ascending, `-` before it descending, each (keys…, id) all one direction, so that
 * one index serves both (read backward for descending). The names are listed descending first
 * (`-amount, amount`), as a refused `sort` names them.
 */
export function keysetSorts<Column extends string>(
  keys: Readonly<Record<Column, readonly KeysetKey[]>>,
  fallback: NoInfer<SortName<Column>>,
): KeysetSorts<Column> {
  const orders = Object.fromEntries(
    Object.entries<readonly KeysetKey[]>(keys).flatMap(([column, columnKeys]) => [
      [`-${column}`, { keys: columnKeys, direction: 'desc' }],
      [column, { keys: columnKeys, direction: 'asc' }],
    ]),
  ) as Record<SortName<Column>, KeysetOrder>;
  return {
    orders,
    fallback,
    param: (value) => sortParam(value, orders, fallback),
    order: (filters) => orders[filters.sort ?? fallback],
  };
}

/**
 * A list's `sort` (docs/dashboard-api.md, "Sorting"): one of `sorts`' names, a column's name,
 * `-` before it for descending. The list's default (`fallback`) is read as no sort at all
 * (undefined), so `?sort=-first_failed_at` and no sort are one list, with one scope: their
 * cursors are each other's, and cursors made before sorting existed still work.
 */
function sortParam<Sort extends string>(
  value: string | undefined,
  sorts: Readonly<Record<Sort, KeysetOrder>>,
  fallback: Sort,
): Sort | undefined {
  if (value === undefined || value === fallback) return undefined;
  if (!Object.hasOwn(sorts, value)) throw invalidField('sort', `must be one of ${Object.keys(sorts).join(', ')}`);
  return value as Sort;
}

/**
 * A CSV export's column as its list query selects it (the row as `alias`, its customer joined as
 * `c`): the customer's email or name, `majorUnits.column` as `majorUnits.cents` in major units
 * (majorUnitsSql, with the row's currency), else the row's own column.
 */
export function exportColumnSql(
  db: Queryable,
  alias: string,
  column: string,
  majorUnits: { column: string; cents: string },
): string | Knex.Raw {
  if (column === 'customer_email') return 'c.email as customer_email';
  if (column === 'customer_name') return 'c.name as customer_name';
  if (column === majorUnits.column) {
    return db.raw(`${majorUnitsSql(`${alias}.${majorUnits.cents}`, `${alias}.currency`)} AS ${column}`);
  }
  return `${alias}.${column}`;
}
