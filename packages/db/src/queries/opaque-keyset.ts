import { createHash } from 'node:crypto';
import type { Knex } from 'knex';
import { invalidField, isUuid, toIsoMillis } from '@retention/core';
import type { Page } from './pagination.js';

/**
 * Keyset pages for the dashboard's own lists (security log, delivery log, …), newest first by
 * (timestamp DESC, id DESC) unless a list's sort says otherwise (KeysetOrder: the campaigns by
 * amount, oldest first). Unlike the public API's timestamp cursor (decisions.md), the
 * cursor here is opaque: it names the last row's timestamp *and* id, so a page may end inside a
 * group of equal timestamps and the next one still starts exactly after it. Clients send back
 * `next_cursor` as it came; anything else is `invalid_param`.
 */
/**
 * A list's scope: its name and a digest of its filters. A cursor made with a scope is accepted
 * only by the same list with the same filters (a cursor of the lost campaigns sent with
 * `status=recovered` would start the recovered list at an arbitrary row, so it is refused).
 * `filters` holds the parsed filters; a Date counts as its ISO instant.
 */
export function listScope(list: string, filters: object): string {
  const canonical = Object.entries(filters)
    .filter(([, value]) => value !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([key, value]): [string, unknown] => [key, value instanceof Date ? toIsoMillis(value) : value]);
  const digest = createHash('sha256').update(JSON.stringify(canonical)).digest('base64url').slice(0, 16);
  return `${list}.${digest}`;
}

const ISO_MILLIS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

export function encodeOpaqueCursor(at: Date, id: string, scope?: string): string {
  return encodeKeysetCursor([toIsoMillis(at)], id, scope);
}

/** A cursor of any order (keysetCursorValue's texts of its keys, then the id, then the scope). */
function encodeKeysetCursor(values: readonly string[], id: string, scope?: string): string {
  const parts = scope === undefined ? [...values, id] : [...values, id, scope];
  return Buffer.from(parts.join('|'), 'utf8').toString('base64url');
}

/** The decoded cursor's refusals: not one this service wrote, or one of another scope. */
function refusedCursor(field: string): Error {
  return invalidField(field, 'must be a next_cursor value returned by this list');
}
function otherScope(field: string, sorted: boolean): Error {
  return invalidField(
    field,
    sorted
      ? 'comes from another list, other filters or another sort; start again without a cursor'
      : 'comes from another list or other filters; start again without a cursor',
  );
}

/**
 * What a key of an order is: a timestamp (written as its ISO instant), an integer (`bigint`,
 * written in decimal, read back as text: Postgres compares it as the column's type), or text
 * (written percent-encoded, so that it never holds the `|` between the parts).
 */
export type KeysetKind = 'timestamp' | 'integer' | 'text';

/** A column of an order, qualified as the query names it (`k.amount_cents`). */
export interface KeysetKey {
  column: string;
  kind: KeysetKind;
}

const INTEGER = /^-?(0|[1-9]\d{0,18})$/;

function keyText(value: unknown, kind: KeysetKind): string {
  if (kind === 'timestamp') return toIsoMillis(value as Date);
  if (kind === 'integer') return String(value);
  return encodeURIComponent(String(value));
}

function keyValue(text: string, kind: KeysetKind): Date | string | null {
  if (kind === 'timestamp') {
    // Exactly what encodeKeysetCursor writes: an instant Postgres can hold, never one it refuses.
    const at = new Date(ISO_MILLIS.test(text) ? text : Number.NaN);
    return Number.isNaN(at.getTime()) || toIsoMillis(at) !== text ? null : at;
  }
  if (kind === 'integer') return INTEGER.test(text) ? text : null;
  try {
    const decoded = decodeURIComponent(text);
    return encodeURIComponent(decoded) === text ? decoded : null;
  } catch {
    return null;
  }
}

/**
 * The values a cursor names for `keys`, and its id. The scope is looked at first: a cursor of
 * another list, filters or sort, whatever keys it holds, is refused as one (`otherScope`), so the
 * reason said is the one that helps (start again), not that the cursor is malformed.
 */
function decodeKeysetCursor(
  value: string,
  keys: readonly KeysetKey[],
  field: string,
  scope: string | undefined,
  sorted: boolean,
): { values: (Date | string)[]; id: string } {
  if (value.length > 300 || !/^[A-Za-z0-9_-]+$/.test(value)) throw refusedCursor(field);
  const parts = Buffer.from(value, 'base64url').toString('utf8').split('|');
  // Another list's or sort's cursor holds the keys of its own order, which may not be these.
  const last = parts.at(-1)!;
  if (scope !== undefined && parts.length >= 3 && SCOPE.test(last) && last !== scope) throw otherScope(field, sorted);
  const own = keys.length + 1;
  if (parts.length < own || parts.length > own + 1) throw refusedCursor(field);
  const values = keys.map((key, index) => keyValue(parts[index]!, key.kind));
  const id = parts[keys.length]!;
  if (!isUuid(id) || values.some((one) => one === null)) throw refusedCursor(field);
  if (parts[own] !== scope) throw otherScope(field, sorted);
  return { values: values as (Date | string)[], id };
}

/** A scope as listScope writes it: the list's name, a dot, the digest. */
const SCOPE = /^[a-z_]+\.[A-Za-z0-9_-]{16}$/;

/**
 * The order of a keyset list: its keys, then its id as the last tie-break, all one direction
 * (so one index on (…filters, keys…, id) serves both directions, scanned either way).
 */
export interface KeysetOrder {
  keys: readonly KeysetKey[];
  direction: 'asc' | 'desc';
}

/**
 * An order's columns: its keys, then `idColumn`. What a page compares with its cursor and orders
 * by, and what a list's query selects for the next cursor to be read from its last row.
 */
export function keysetColumns(order: KeysetOrder, idColumn: string): string[] {
  return [...order.keys.map((key) => key.column), idColumn];
}

/** `query` in `order` (its keys, then `idColumn`): how opaqueKeysetPage reads it. */
export function keysetOrdered(query: Knex.QueryBuilder, order: KeysetOrder, idColumn: string): Knex.QueryBuilder {
  return query.orderBy(keysetColumns(order, idColumn).map((column) => ({ column, order: order.direction })));
}

/** The order of a list newest first by `column`, a timestamp (the security log, the delivery log). */
export function newestFirst(column: string): KeysetOrder {
  return { keys: [{ column, kind: 'timestamp' }], direction: 'desc' };
}

/**
 * One page of `query` (filters applied, no order, no limit) in `order`, after `cursor`. The query
 * must be served by an index on (…filters, keys…, id) for deep pages to cost what the first costs.
 * `idColumn` and the columns may be qualified (`a.id`) when the query joins.
 */
export async function opaqueKeysetPage<Row extends Record<string, unknown>>(
  query: Knex.QueryBuilder,
  options: {
    /** The list's order: newestFirst(column), or a sort's. */
    order: KeysetOrder;
    idColumn?: string;
    cursor?: string | undefined;
    limit: number;
    /** listScope(...) of the list and its filters; the cursor is refused for any other. */
    scope?: string;
    /** The list has sorts: a refused scope names another sort among its reasons. */
    sorted?: boolean;
  },
): Promise<Page<Row>> {
  const idColumn = options.idColumn ?? 'id';
  const { order } = options;
  const columns = keysetColumns(order, idColumn);
  if (options.cursor !== undefined) {
    const cursor = decodeKeysetCursor(options.cursor, order.keys, 'cursor', options.scope, options.sorted ?? false);
    const casts = order.keys.map((key) => CASTS[key.kind]);
    query.whereRaw(
      `(${columns.map(() => '??').join(', ')}) ${order.direction === 'desc' ? '<' : '>'} (${[...casts, '::uuid']
        .map((cast) => `?${cast}`)
        .join(', ')})`,
      [...columns, ...cursor.values, cursor.id],
    );
  }
  const rows = (await keysetOrdered(query, order, idColumn).limit(options.limit + 1)) as Row[];
  const hasMore = rows.length > options.limit;
  const page = hasMore ? rows.slice(0, options.limit) : rows;
  const last = page.at(-1);
  const key = (qualified: string) => qualified.split('.').at(-1)!;
  return {
    rows: page,
    hasMore,
    nextCursor:
      hasMore && last
        ? encodeKeysetCursor(
            order.keys.map((one) => keyText(last[key(one.column)], one.kind)),
            String(last[key(idColumn)]),
            options.scope,
          )
        : null,
  };
}

/** Each kind's cast of a cursor's value, so it compares as the column's type does. */
const CASTS: Record<KeysetKind, string> = { timestamp: '::timestamptz', integer: '::bigint', text: '::text' };
