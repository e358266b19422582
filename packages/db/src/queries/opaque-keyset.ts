import type { Knex } from 'knex';
import { invalidParam, isUuid, toIsoMillis } from '@retention/core';

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

export function encodeOpaqueCursor(at: Date, id: string): string {
  return Buffer.from(`${toIsoMillis(at)}|${id}`, 'utf8').toString('base64url');
}

export function decodeOpaqueCursor(value: string, field = 'cursor'): OpaqueCursor {
  const refuse = () => invalidParam(`${field}: must be a next_cursor value returned by this list`);
  if (value.length > 200 || !/^[A-Za-z0-9_-]+$/.test(value)) throw refuse();
  const [iso, id, ...rest] = Buffer.from(value, 'base64url').toString('utf8').split('|');
  const at = new Date(iso ?? '');
  if (rest.length > 0 || !id || !isUuid(id) || Number.isNaN(at.getTime())) throw refuse();
  return { at, id };
}

export interface OpaquePage<Row> {
  rows: Row[];
  hasMore: boolean;
  nextCursor: string | null;
}

/**
 * One page of `query` (filters applied, no order, no limit) after `cursor`. The query must be
 * served by an index on (…filters, column DESC, id DESC) for deep pages to cost what the first
 * costs. `idColumn` and `column` may be qualified (`a.id`) when the query joins.
 */
export async function opaqueKeysetPage<Row extends Record<string, unknown>>(
  query: Knex.QueryBuilder,
  options: { column: string; idColumn?: string; cursor?: string | undefined; limit: number },
): Promise<OpaquePage<Row>> {
  const idColumn = options.idColumn ?? 'id';
  const cursor = options.cursor === undefined ? undefined : decodeOpaqueCursor(options.cursor);
  if (cursor) {
    query.whereRaw('(??, ??) < (?, ?)', [options.column, idColumn, cursor.at, cursor.id]);
  }
  const rows = (await query
    .orderBy([
      { column: options.column, order: 'desc' },
      { column: idColumn, order: 'desc' },
    ])
    .limit(options.limit + 1)) as Row[];
  const hasMore = rows.length > options.limit;
  const page = hasMore ? rows.slice(0, options.limit) : rows;
  const last = page.at(-1);
  const key = (qualified: string) => qualified.split('.').at(-1)!;
  return {
    rows: page,
    hasMore,
    nextCursor:
      hasMore && last ? encodeOpaqueCursor(last[key(options.column)] as Date, String(last[key(idColumn)])) : null,
  };
}
