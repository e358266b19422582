import { once } from 'node:events';
import type { ServerResponse } from 'node:http';
import type { Writable } from 'node:stream';
import { stringify } from 'csv-stringify/sync';
import { toIsoMillis } from '@retention/core';
import { opaqueKeysetPage } from '@retention/db';
import type { Knex } from 'knex';
import type { Logger } from '@retention/runtime';

/**
 * Writes a dashboard list (its filters applied, ordered by (timestamp DESC, id DESC)) as CSV,
 * one keyset page at a time: a page of rows is read on a pooled connection, which goes back to
 * the pool before the page is written; the next page is read only once the client has taken
 * the last (the response drained), starting after the last row's key. So a client that stops
 * reading holds no database connection, only one page in memory, and rows inserted during the
 * export are neither repeated nor make others be skipped. A response that has not drained for
 * `stallMs` is destroyed: a client that never reads again does not keep its export forever.
 * Cells that a spreadsheet would run as a formula (starting with = + - @ tab or carriage
 * return) get a leading apostrophe, as OWASP recommends.
 */

export interface KeysetList {
  /** The list's query, filters applied and ordered by (column DESC, idColumn DESC); built anew for each page. */
  query: () => Knex.QueryBuilder;
  /** The ordering timestamp and id columns, qualified as the query names them (`s.created_at`). */
  column: string;
  idColumn: string;
}

export interface CsvExportOptions {
  /** Rows read per query: a few hundred keeps a page's memory small and its queries few. */
  pageSize?: number;
  /** How long the response may stay full (not drained) before it is destroyed. */
  stallMs?: number;
}

const PAGE_SIZE = 500;
const STALL_MS = 30_000;

const FORMULA_START = /^[=+\-@\t\r]/;

function neutralizeFormula(value: string): string {
  return FORMULA_START.test(value) ? `'${value}` : value;
}

/** A row (an object) as its cells in `columns` order: ISO times, '' for null, formulas neutralised. */
function csvCells(columns: readonly string[], row: Record<string, unknown>): string[] {
  return columns.map((column) => {
    const value = row[column];
    if (value === null || value === undefined) return '';
    if (value instanceof Date) return toIsoMillis(value);
    // Every exported column is text, a number or a timestamp; nothing else reaches here.
    return neutralizeFormula(typeof value === 'string' ? value : JSON.stringify(value));
  });
}

/** Why writing stopped: every row written, the client gone, or its response full for `stallMs`. */
type Outcome = 'done' | 'closed' | 'stalled';

/**
 * Writes the whole list as CSV to `out` (header first), page by page, waiting for `out` to
 * drain between pages; ends `out` once every row is written. `out` is left open otherwise.
 */
export async function writeCsvPages(
  out: Writable,
  list: KeysetList,
  columns: readonly string[],
  options: CsvExportOptions = {},
): Promise<Outcome> {
  const pageSize = options.pageSize ?? PAGE_SIZE;
  const stallMs = options.stallMs ?? STALL_MS;
  let cursor: string | undefined;
  let header = true;
  for (;;) {
    const page = await opaqueKeysetPage<Record<string, unknown>>(list.query(), {
      column: list.column,
      idColumn: list.idColumn,
      cursor,
      limit: pageSize,
      ordered: true,
    });
    if (out.destroyed) return 'closed';
    const text = stringify(
      page.rows.map((row) => csvCells(columns, row)),
      { header, columns: [...columns] },
    );
    header = false;
    const full = !out.write(text);
    if (!page.nextCursor) {
      out.end();
      return 'done';
    }
    cursor = page.nextCursor;
    if (full) {
      const drained = await drainedWithin(out, stallMs);
      if (drained !== 'drained') return drained;
    }
  }
}

/** Waits for `out` to drain; 'closed' if it is destroyed first, 'stalled' after `ms` without either. */
async function drainedWithin(out: Writable, ms: number): Promise<'drained' | 'closed' | 'stalled'> {
  if (out.destroyed) return 'closed';
  const giveUp = new AbortController();
  const timer = setTimeout(() => giveUp.abort(), ms);
  try {
    return await Promise.race([
      once(out, 'drain', { signal: giveUp.signal }).then(() => 'drained' as const),
      once(out, 'close', { signal: giveUp.signal }).then(() => 'closed' as const),
    ]);
  } catch (error) {
    if (giveUp.signal.aborted) return out.destroyed ? 'closed' : 'stalled';
    throw error;
  } finally {
    clearTimeout(timer);
    giveUp.abort();
  }
}

/**
 * Answers the request with the list as a CSV download (`filename`). Once the first bytes are
 * out a failure can only cut the download short: the response is destroyed, never answered twice.
 */
export async function streamCsv(
  res: ServerResponse,
  logger: Logger,
  list: KeysetList,
  columns: readonly string[],
  filename: string,
  options: CsvExportOptions = {},
): Promise<void> {
  res.statusCode = 200;
  res.setHeader('Content-Type', 'text/csv; charset=utf-8');
  res.setHeader('Content-Disposition', `attachment; filename="${filename}"`);
  try {
    const outcome = await writeCsvPages(res, list, columns, options);
    if (outcome === 'stalled') {
      logger.warn(
        { filename, stall_ms: options.stallMs ?? STALL_MS },
        'CSV export stalled: the client stopped reading, the download is cut',
      );
      res.destroy();
    }
  } catch (error) {
    if (!res.destroyed) logger.error({ err: error, filename }, 'CSV export failed');
    res.destroy();
  }
}
