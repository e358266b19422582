import { createHash } from 'node:crypto';
import type { Knex } from 'knex';
import { invalidField, isUuid, toIsoMillis } from '@retention/core';
import type { Page } from './pagination.js';

/**
 * Keyset pages for the dashboard's own lists (security log, delivery log, …), newest first by
 * (timestamp DESC, id DESC). Unlike the public API's timestamp cursor (decisions.md), the
 * cursor here is opaque: it names the last row's timestamp *and* id, so a page may end inside a
 * group of equal timestamps and the next one still starts exactly after it. Clients send back
 * `next_cursor` as it came; anything else is `invalid_param`.
 */
export interface OpaqueCursor {
  at: Date;
  id: string;
}

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
  const parts = scope === undefined ? [toIsoMillis(at), id] : [toIsoMillis(at), id, scope];
  return Buffer.from(parts.join('|'), 'utf8').toString('base64url');
}

/** The row a cursor names; with `scope`, only a cursor made with that same scope. */
export function decodeOpaqueCursor(value: string, field = 'cursor', scope?: string): OpaqueCursor {
  const refuse = () => invalidField(field, 'must be a next_cursor value returned by this list');
  if (value.length > 300 || !/^[A-Za-z0-9_-]+$/.test(value)) throw refuse();
  const [iso, id, ...rest] = Buffer.from(value, 'base64url').toString('utf8').split('|');
  // Exactly what encodeOpaqueCursor writes: an instant Postgres can hold, never one it refuses.
  const at = new Date(iso !== undefined && ISO_MILLIS.test(iso) ? iso : Number.NaN);
  if (rest.length > 1 || !id || !isUuid(id) || Number.isNaN(at.getTime()) || toIsoMillis(at) !== iso) throw refuse();
  if (rest[0] !== scope) {
    throw invalidField(field, 'comes from another list or other filters; start again without a cursor');
  }
  return { at, id };
}

/**
 * One page of `query` (filters applied, no order, no limit) after `cursor`. The query must be
 * served by an index on (…filters, column DESC, id DESC) for deep pages to cost what the first
 * costs. `idColumn` and `column` may be qualified (`a.id`) when the query joins.
 */
export async function opaqueKeysetPage<Row extends Record<string, unknown>>(
  query: Knex.QueryBuilder,
  options: {
    column: string;
    idColumn?: string;
    cursor?: string | undefined;
    limit: number;
    /** listScope(...) of the list and its filters; the cursor is refused for any other. */
    scope?: string;
    /** The query already orders by (column DESC, id DESC). */
    ordered?: boolean;
  },
): Promise<Page<Row>> {
  const idColumn = options.idColumn ?? 'id';
  const cursor = options.cursor === undefined ? undefined : decodeOpaqueCursor(options.cursor, 'cursor', options.scope);
  if (cursor) {
    query.whereRaw('(??, ??) < (?, ?)', [options.column, idColumn, cursor.at, cursor.id]);
  }
  if (!options.ordered) {
    query.orderBy([
      { column: options.column, order: 'desc' },
      { column: idColumn, order: 'desc' },
    ]);
  }
  const rows = (await query.limit(options.limit + 1)) as Row[];
  const hasMore = rows.length > options.limit;
  const page = hasMore ? rows.slice(0, options.limit) : rows;
  const last = page.at(-1);
  const key = (qualified: string) => qualified.split('.').at(-1)!;
  return {
    rows: page,
    hasMore,
    nextCursor:
      hasMore && last
        ? encodeOpaqueCursor(last[key(options.column)] as Date, String(last[key(idColumn)]), options.scope)
        : null,
  };
}
