import type { Knex } from 'knex';
import { PAGE_SIZE, toIsoMillis, type ListEnvelope } from '@retention/core';

/**
 * Keyset pagination, newest first, by (timestamp DESC, id DESC), per decisions.md:
 * - `cursor` selects rows strictly before it;
 * - a page never splits a group of rows that share the ordering timestamp: when row 51 shares
 *   row 50's timestamp, the page stops before that group (fewer than 50 rows, has_more);
 * - when one group alone fills the page, the page is that whole group, however large;
 * - next_cursor is the timestamp of the last row returned (null for an empty page).
 * Every query is a range scan of the list's (workspace_id, timestamp DESC, id DESC) index, so
 * a page deep in the list costs what the first page costs.
 */
export interface KeysetOptions<Row> {
  /** The filtered query (workspace and filters applied, no order, no limit). */
  filtered: () => Knex.QueryBuilder;
  /** The ordering column, qualified if the query joins. */
  column: string;
  timestampOf: (row: Row) => Date;
  cursor: Date | undefined;
  pageSize?: number;
}

export async function keysetPage<Row>(options: KeysetOptions<Row>): Promise<{ rows: Row[]; hasMore: boolean }> {
  const { filtered, column, timestampOf, cursor } = options;
  const pageSize = options.pageSize ?? PAGE_SIZE;
  const ordered = (query: Knex.QueryBuilder) =>
    query.orderBy([
      { column, order: 'desc' },
      { column: 'id', order: 'desc' },
    ]);

  const before = cursor ? filtered().where(column, '<', cursor) : filtered();
  const rows = (await ordered(before).limit(pageSize + 1)) as Row[];
  if (rows.length <= pageSize) return { rows, hasMore: false };

  const boundary = timestampOf(rows[pageSize - 1]!).getTime();
  if (timestampOf(rows[pageSize]!).getTime() !== boundary) return { rows: rows.slice(0, pageSize), hasMore: true };

  const beforeBoundaryGroup = rows.filter((row) => timestampOf(row).getTime() > boundary);
  if (beforeBoundaryGroup.length > 0) return { rows: beforeBoundaryGroup, hasMore: true };

  // One timestamp group fills the whole page: return all of it.
  const groupAt = new Date(boundary);
  const [group, older] = await Promise.all([
    ordered(filtered().where(column, '=', groupAt)) as Promise<Row[]>,
    filtered().where(column, '<', groupAt).first(column) as Promise<Row | undefined>,
  ]);
  return { rows: group, hasMore: older !== undefined };
}

export function listEnvelope<Row, Resource>(
  page: { rows: Row[]; hasMore: boolean },
  toResource: (row: Row) => Resource,
  timestampOf: (row: Row) => Date,
): ListEnvelope<Resource> {
  const last = page.rows.at(-1);
  return {
    object: 'list',
    data: page.rows.map(toResource),
    has_more: page.hasMore,
    next_cursor: last ? toIsoMillis(timestampOf(last)) : null,
  };
}
