import { once } from 'node:events';
import type { ServerResponse } from 'node:http';
import type { Writable } from 'node:stream';
import { stringify } from 'csv-stringify/sync';
import { invalidField, toIsoMillis } from '@retention/core';
import { knownZone } from '@retention/core/time-zones';
import { opaqueKeysetPage, type KeysetOrder } from '@retention/db';
import type { Knex } from 'knex';
import type { Logger } from '@retention/runtime';

/**
 * Writes a dashboard list (its filters applied, in the list's order: its sort's keys, then id) as CSV,
 * one keyset page at a time: a page of rows is read on a pooled connection, which goes back to
 * the pool before the page is written; the next page is read only once the client has taken
 * the last (the response drained), starting after the last row's key. So a client that stops
 * reading holds no database connection, only one page in memory, and rows inserted during the
 * export are neither repeated nor make others be skipped. Each wait for the client, the last
 * one (the whole response taken) included, is bounded (DownloadPace): a response that has not
 * drained for `stallMs`, or whose download averages less than `minBytesPerSecond` (over the
 * time spent waiting for the client, once that exceeds `graceMs`), is destroyed. So a client
 * that stops or trickles cannot keep its export (and its slot, export-slots.ts) for long.
 * Cells that a spreadsheet would run as a formula (starting with = + - @ tab or carriage
 * return) get a leading apostrophe, as OWASP recommends.
 */

export interface KeysetList {
  /** The list's query, filters applied, unordered (each page is read in `order`); built anew for each page. */
  query: () => Knex.QueryBuilder;
  /** The list's order (its sort's), its columns qualified as the query names them (`s.created_at`). */
  order: KeysetOrder;
  idColumn: string;
}

export interface CsvExportOptions {
  /** Rows read per query: a few hundred keeps a page's memory small and its queries few. */
  pageSize?: number;
  /** How long the response may stay full (not drained, or not finished) before it is destroyed. */
  stallMs?: number;
  /** The slowest average, in bytes a second of waiting for the client, a download may keep... */
  minBytesPerSecond?: number;
  /** ...once it has been waited for this long (the first pages fill the sockets' buffers, not the client). */
  graceMs?: number;
}

const PAGE_SIZE = 500;
const STALL_MS = 30_000;
/** 64 KB/s (512 kbit/s) after a minute: docs/dashboard-api.md, "Exports", says why. */
const MIN_BYTES_PER_SECOND = 64 * 1024;
const GRACE_MS = 60_000;

/**
 * A cell a spreadsheet may read as a formula (OWASP's CSV injection list): one that starts with
 * = + - @, a tab or a carriage return; or with one of the four signs behind white space (an
 * import that trims runs it) or in its full-width form (one that folds them, as CJK locales do).
 * Such a cell is written behind a `'`, which spreadsheets show as text.
 */
const FORMULA_START = /^(?:[\t\r]|\s*[=+\-@\uFF1D\uFF0B\uFF0D\uFF20])/u;

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

/**
 * Why writing stopped: every row written and taken, the client gone, its response full for
 * `stallMs`, or its download below the slowest average allowed.
 */
type Outcome = 'done' | 'closed' | 'stalled' | 'too_slow';

/** How long the client may take to take what is written so far, and what running out of it means. */
interface Wait {
  ms: number;
  runsOutAs: 'stalled' | 'too_slow';
}

/**
 * The bounds on an export's waits for its client: none longer than `stallMs`, and none past the
 * moment its download would average less than `minBytesPerSecond` over the time spent waiting
 * for the client (never before `graceMs` of it). A per-wait bound alone would let a client
 * taking each page just within it hold its export for hours. Only waits count: the time the
 * database takes to read a page is the server's, not the client's.
 */
class DownloadPace {
  private written = 0;
  private waitedMs = 0;

  constructor(private readonly limits: Required<Omit<CsvExportOptions, 'pageSize'>>) {}

  wrote(bytes: number): void {
    this.written += bytes;
  }

  /** Waits for the client to take what is written ('drain': enough to write on; 'finish': all of it). */
  async clientTakes(out: Writable, event: 'drain' | 'finish'): Promise<'taken' | 'closed' | Wait['runsOutAs']> {
    const started = Date.now();
    try {
      return await takenWithin(out, event, this.nextWait());
    } finally {
      this.waitedMs += Date.now() - started;
    }
  }

  private nextWait(): Wait {
    const { stallMs, minBytesPerSecond, graceMs } = this.limits;
    const allowedMs = Math.max(graceMs, (this.written / minBytesPerSecond) * 1000);
    const leftMs = allowedMs - this.waitedMs;
    return leftMs < stallMs
      ? { ms: Math.max(0, leftMs), runsOutAs: 'too_slow' }
      : { ms: stallMs, runsOutAs: 'stalled' };
  }
}

/**
 * Writes the whole list as CSV to `out` (header first), page by page, waiting for `out` to
 * drain between pages; ends `out` once every row is written and waits for it to finish (the
 * client took the last page). `out` is left open otherwise.
 */
export async function writeCsvPages(
  out: Writable,
  list: KeysetList,
  columns: readonly string[],
  options: CsvExportOptions = {},
): Promise<Outcome> {
  const pageSize = options.pageSize ?? PAGE_SIZE;
  const pace = new DownloadPace({
    stallMs: options.stallMs ?? STALL_MS,
    minBytesPerSecond: options.minBytesPerSecond ?? MIN_BYTES_PER_SECOND,
    graceMs: options.graceMs ?? GRACE_MS,
  });
  let cursor: string | undefined;
  let header = true;
  for (;;) {
    const page = await opaqueKeysetPage<Record<string, unknown>>(list.query(), {
      order: list.order,
      idColumn: list.idColumn,
      cursor,
      limit: pageSize,
    });
    if (out.destroyed) return 'closed';
    // The file opens with a UTF-8 byte order mark (the header's page only): Excel reads a CSV
    // without one in the machine's legacy code page, and "Zoë" became "ZoÃ«" (docs/dashboard-api.md).
    const text = stringify(
      page.rows.map((row) => csvCells(columns, row)),
      { header, bom: header, columns: [...columns] },
    );
    header = false;
    pace.wrote(Buffer.byteLength(text));
    const full = !out.write(text);
    if (!page.nextCursor) {
      out.end();
      // Not done before the client has the last page: until then the export holds it in memory.
      const finished = await pace.clientTakes(out, 'finish');
      return finished === 'taken' ? 'done' : finished;
    }
    cursor = page.nextCursor;
    if (full) {
      const drained = await pace.clientTakes(out, 'drain');
      if (drained !== 'taken') return drained;
    }
  }
}

/** Waits for `out` to emit `event`: 'closed' if it is destroyed first, `wait.runsOutAs` after `wait.ms`. */
async function takenWithin(
  out: Writable,
  event: 'drain' | 'finish',
  wait: Wait,
): Promise<'taken' | 'closed' | Wait['runsOutAs']> {
  if (event === 'finish' && out.writableFinished) return 'taken';
  if (out.destroyed) return 'closed';
  const giveUp = new AbortController();
  const timer = setTimeout(() => giveUp.abort(), wait.ms);
  try {
    return await Promise.race([
      once(out, event, { signal: giveUp.signal }).then(() => 'taken' as const),
      once(out, 'close', { signal: giveUp.signal }).then(() => 'closed' as const),
    ]);
  } catch (error) {
    if (giveUp.signal.aborted) return out.destroyed ? 'closed' : wait.runsOutAs;
    throw error;
  } finally {
    clearTimeout(timer);
    giveUp.abort();
  }
}

/** An IANA zone name this runtime knows, as it spells it; an unknown one or an offset is 400 at `tz`. */
export function exportZone(name: string | undefined): string {
  if (name === undefined) return 'UTC';
  const zone = knownZone(name);
  if (zone === null) throw invalidField('tz', 'must be an IANA time zone name, such as Europe/Berlin');
  return zone;
}

/**
 * A bound of an export's range in its file name: the day (`2026-11-01`) when the instant is
 * midnight in `zone`, which is how the dashboard sends a day; else the UTC instant itself,
 * without the colons a file name cannot hold (`2026-10-31T113000Z`).
 */
function boundName(instant: Date, zone: string): string {
  const wall = new Intl.DateTimeFormat('en-CA', {
    timeZone: zone,
    hourCycle: 'h23',
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
    fractionalSecondDigits: 3,
  }).formatToParts(instant);
  const part = (type: Intl.DateTimeFormatPartTypes) => wall.find((entry) => entry.type === type)?.value;
  if (`${part('hour')}${part('minute')}${part('second')}${part('fractionalSecond')}` === '000000000') {
    return `${part('year')}-${part('month')}-${part('day')}`;
  }
  return toIsoMillis(instant).replaceAll(':', '').replace('.000Z', 'Z');
}

/** The day `instant` is in `zone`, `YYYY-MM-DD`. */
function dayIn(instant: Date, zone: string): string {
  return new Intl.DateTimeFormat('en-CA', { timeZone: zone, year: 'numeric', month: '2-digit', day: '2-digit' }).format(
    instant,
  );
}

/** Longest text of a filter kept in a file name, after it is made safe (textName). */
const TEXT_NAME_CHARACTERS = 40;

/**
 * A free-text filter as a part of a file name, after its `label`: `search-jane-example-com` for
 * the search (`q`) `jane@example.com`, `tag-annual-plan` for the tag `Annual plan`; its letters
 * lowercased and their accents dropped, every run of anything but ASCII letters and digits one
 * `-`, cut at 40 characters; the label alone when nothing of it is left (a search in Greek).
 */
function textName(label: string, text: string): string {
  const safe = text
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .slice(0, TEXT_NAME_CHARACTERS)
    .replace(/^-+|-+$/g, '');
  return safe ? `${label}-${safe}` : label;
}

/** What an export holds, as its file name says it (exportFilename). */
export interface ExportHolds {
  /** The filters' codes, in the list's order: `in_flight` is written `in-flight`. */
  codes?: readonly (string | undefined)[];
  /** Then its free-text filters, each as its label and its text made safe (textName): `search`, `tag`. */
  texts?: readonly (readonly [label: string, text: string | undefined])[];
  from?: Date | undefined;
  to?: Date | undefined;
}

/**
 * The file name of an export (docs/dashboard-api.md, "File names"): the list (`campaigns`,
 * `cancel-sessions`, `customers`), then what it holds: its codes, its texts, then its range of
 * instants as exported, named in the zone of the range's days:
 * `campaigns-lost-2026-11-01-to-2026-11-02.csv`, `campaigns-from-2026-11-01.csv`,
 * `campaigns-before-2026-11-02.csv`; without a range, the day it was exported (`now`) in that
 * zone: `campaigns-recovered-2026-11-29.csv`, `customers-tag-vip-2026-11-29.csv`. ASCII digits,
 * letters and `-` only: safe in a quoted Content-Disposition.
 */
export function exportFilename(name: string, holds: ExportHolds = {}, zone = 'UTC', now = new Date()): string {
  const { from, to } = holds;
  const codes = (holds.codes ?? []).filter(Boolean).map((code) => code!.replaceAll('_', '-'));
  const texts = (holds.texts ?? []).flatMap(([label, text]) => (text === undefined ? [] : [textName(label, text)]));
  const range =
    from && to
      ? `${boundName(from, zone)}-to-${boundName(to, zone)}`
      : from
        ? `from-${boundName(from, zone)}`
        : to
          ? `before-${boundName(to, zone)}`
          : dayIn(now, zone);
  return `${[name, ...codes, ...texts, range].join('-')}.csv`;
}

/** The headers of a CSV download named `filename`: a GET's, before its rows, and a HEAD's, alone. */
export function setCsvHeaders(res: ServerResponse, filename: string): void {
  res.statusCode = 200;
  res.setHeader('Content-Type', 'text/csv; charset=utf-8');
  res.setHeader('Content-Disposition', `attachment; filename="${filename}"`);
}

/**
 * Answers the request with the list as a CSV download (`filename`). A failure before the first
 * byte is thrown, for the error handler to answer (the JSON error shape); once the first bytes
 * are out it can only cut the download short: the response is destroyed, never answered twice.
 */
export async function streamCsv(
  res: ServerResponse,
  logger: Logger,
  list: KeysetList,
  columns: readonly string[],
  filename: string,
  options: CsvExportOptions = {},
): Promise<void> {
  setCsvHeaders(res, filename);
  try {
    const outcome = await writeCsvPages(res, list, columns, options);
    if (outcome === 'stalled' || outcome === 'too_slow') {
      logCut(logger, outcome, filename, options);
      res.destroy();
    }
  } catch (error) {
    if (!res.headersSent) {
      res.removeHeader('Content-Type');
      res.removeHeader('Content-Disposition');
      throw error;
    }
    if (!res.destroyed) logger.error({ err: error, filename }, 'CSV export failed');
    res.destroy();
  }
}

function logCut(logger: Logger, why: 'stalled' | 'too_slow', filename: string, options: CsvExportOptions): void {
  if (why === 'stalled') {
    logger.warn(
      { filename, stall_ms: options.stallMs ?? STALL_MS },
      'CSV export stalled: the client stopped reading, the download is cut',
    );
  } else {
    logger.warn(
      { filename, min_bytes_per_second: options.minBytesPerSecond ?? MIN_BYTES_PER_SECOND },
      'CSV export too slow: the client reads below the slowest average allowed, the download is cut',
    );
  }
}
