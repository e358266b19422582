import type { Knex } from 'knex';
import { PAGE_SIZE, toIsoMillis, type ListEnvelope } from '@retention/core';
import type { Queryable } from '../connection.js';
import { JsonText } from '../resource-json.js';

/**
 * Keyset pagination, newest first, by (timestamp DESC, id DESC), per decisions.md:
 * - `cursor` selects rows strictly before it;
 * - a page never splits a group of rows that share the ordering timestamp: when row 51 shares
 *   row 50's timestamp, the page stops before that group (fewer than 50 rows, has_more);
 * - when one group alone fills the page, the page is that whole group, however large;
 * - next_cursor is the timestamp of the last row returned (null for an empty page).
 * Every query is a range scan of the list's (workspace_id, timestamp DESC, id DESC) index, so
 * a page deep in the list costs what the first page costs.
 *
 * Rows come back as their API JSON (resource-json.ts) beside their position, the ordering
 * timestamp in epoch milliseconds (timestamps are stored to the millisecond).
 */
export interface KeysetOptions {
  db: Queryable;
  /** The filtered query (workspace and filters applied, no select, no order, no limit). */
  filtered: () => Knex.QueryBuilder;
  /** The ordering column. */
  column: string;
  /** SQL of a row's API representation. */
  json: string;
  cursor: Date | undefined;
  pageSize?: number;
}

export interface PageRow {
  /** The ordering timestamp, in epoch milliseconds. */
  position: number;
  json: string;
}

/** A page of a list, public or the dashboard's: its rows, whether more follow, the cursor of the next. */
export interface Page<Row> {
  rows: Row[];
  hasMore: boolean;
  nextCursor: string | null;
}

export async function keysetPage(options: KeysetOptions): Promise<Page<PageRow>> {
  const { rows, hasMore } = await keysetRows(options);
  const last = rows.at(-1);
  return { rows, hasMore, nextCursor: last ? toIsoMillis(last.position) : null };
}

async function keysetRows(options: KeysetOptions): Promise<{ rows: PageRow[]; hasMore: boolean }> {
  const { db, filtered, column, cursor } = options;
  const pageSize = options.pageSize ?? PAGE_SIZE;
  const selected = (query: Knex.QueryBuilder) =>
    query
      .select(db.raw(`(extract(epoch FROM ??) * 1000)::bigint AS position, ${options.json}::text AS json`, [column]))
      .orderBy([
        { column, order: 'desc' },
        { column: 'id', order: 'desc' },
      ]) as Promise<PageRow[]>;

  const before = cursor ? filtered().where(column, '<', cursor) : filtered();
  const rows = await selected(before.limit(pageSize + 1));
  if (rows.length <= pageSize) return { rows, hasMore: false };

  const boundary = rows[pageSize - 1]!.position;
  if (rows[pageSize]!.position !== boundary) return { rows: rows.slice(0, pageSize), hasMore: true };

  const beforeBoundaryGroup = rows.filter((row) => row.position > boundary);
  if (beforeBoundaryGroup.length > 0) return { rows: beforeBoundaryGroup, hasMore: true };

  // One timestamp group fills the whole page: return all of it.
  const groupAt = new Date(boundary);
  const [group, older] = await Promise.all([
    selected(filtered().where(column, '=', groupAt)),
    filtered().where(column, '<', groupAt).first(column) as Promise<unknown>,
  ]);
  return { rows: group, hasMore: older !== undefined };
}

/**
 * The list envelope (docs/api.md, "Lists and pagination"; the dashboard's lists wear the same)
 * around a page of rows whose `json` Postgres built, as JSON text to write as it is: the rows
 * are joined as they came, never parsed and serialised again.
 */
export function listEnvelope<Resource>(
  page: Page<{ json: string }>,
  total?: ListTotal,
): JsonText<ListEnvelope<Resource>> {
  const counted = total ? `,"total":${total.total},"total_capped":${total.capped}` : '';
  return new JsonText(
    `{"object":"list","data":[${page.rows.map((row) => row.json).join(',')}],` +
      `"has_more":${page.hasMore},"next_cursor":${JSON.stringify(page.nextCursor)}${counted}}`,
  );
}

/**
 * Most rows a dashboard list counts (docs/dashboard-api.md, "Counts"): past it the answer is
 * "more than 1,000", so a count reads at most this many rows and one more, whatever the list holds.
 */
export const LIST_COUNT_CAP = 1000;

/** How many rows a dashboard list's filters match: `total`, or, when `capped`, more than it. */
export interface ListTotal {
  total: number;
  capped: boolean;
}

/**
 * The count a dashboard list's first page (no cursor) carries when it is the whole list: its own
 * rows, with no query. Any other page carries none: the page asks `countMatching` for it through
 * the list's count route, beside the list, so that a first page never waits for a count
 * (docs/dashboard-api.md, "Counts": counted inside the list's request, it cost the first page of
 * 1,000,000 campaigns about a third of its throughput).
 */
export function wholeListTotal(
  page: { rows: unknown[]; hasMore: boolean },
  cursor: string | undefined,
): ListTotal | undefined {
  return cursor === undefined && !page.hasMore ? { total: page.rows.length, capped: false } : undefined;
}

/**
 * How many rows a dashboard list's query (`matching`: the list's, filters applied) matches,
 * counted up to LIST_COUNT_CAP + 1 rows, unordered, in a LIMIT subquery, so a list of a million
 * rows costs what one of 1,001 does.
 */
export async function countMatching(db: Queryable, matching: Knex.QueryBuilder): Promise<ListTotal> {
  const rows = matching
    .clearSelect()
    .clearOrder()
    .select(db.raw('1'))
    .limit(LIST_COUNT_CAP + 1)
    .as('matching');
  const [{ n }] = (await db.from(rows).select(db.raw('count(*)::int AS n'))) as [{ n: number }];
  return n > LIST_COUNT_CAP ? { total: LIST_COUNT_CAP, capped: true } : { total: n, capped: false };
}

/** A list count as the count routes answer it. */
export function countEnvelope(
  total: ListTotal,
): JsonText<{ object: 'list_count'; total: number; total_capped: boolean }> {
  return new JsonText(`{"object":"list_count","total":${total.total},"total_capped":${total.capped}}`);
}
