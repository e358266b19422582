import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Request, Response } from 'express';
import { stringify } from 'csv-stringify';
import { toIsoMillis } from '@retention/core';
import type { Knex } from 'knex';
import type { Logger } from '@retention/runtime';

/**
 * Streams a query's rows as CSV to the response: a Postgres cursor (pg-query-stream, through
 * knex's `.stream()`) piped through csv-stringify, with backpressure end to end, so a million
 * rows never sit in memory. Cells that a spreadsheet would run as a formula (starting with
 * = + - @ tab or carriage return) get a leading apostrophe, as OWASP recommends.
 */

const FORMULA_START = /^[=+\-@\t\r]/;

function neutralizeFormula(value: string): string {
  return FORMULA_START.test(value) ? `'${value}` : value;
}

export async function streamCsv(
  req: Request,
  res: Response,
  logger: Logger,
  query: Knex.QueryBuilder,
  columns: readonly string[],
  filename: string,
): Promise<void> {
  res.status(200);
  res.setHeader('Content-Type', 'text/csv; charset=utf-8');
  res.setHeader('Content-Disposition', `attachment; filename="${filename}"`);
  const rows = query.stream({ highWaterMark: 500 });
  const cells = csvCells(columns);
  try {
    await pipeline(rows, cells, stringify({ header: true, columns: [...columns] }), res);
  } catch (error) {
    // Headers are gone: the client sees a cut-off download rather than a JSON error.
    if (!req.destroyed) logger.error({ err: error }, 'CSV export failed');
    res.destroy();
  }
}

/** Rows (objects) to arrays of cells in `columns` order: ISO times, '' for null, formulas neutralised. */
export function csvCells(columns: readonly string[]): Transform {
  return new Transform({
    objectMode: true,
    transform(row: Record<string, unknown>, _encoding, done) {
      done(
        null,
        columns.map((column) => {
          const value = row[column];
          if (value === null || value === undefined) return '';
          if (value instanceof Date) return toIsoMillis(value);
          // Every exported column is text, a number or a timestamp; nothing else reaches here.
          return neutralizeFormula(typeof value === 'string' ? value : JSON.stringify(value));
        }),
      );
    },
  });
}
