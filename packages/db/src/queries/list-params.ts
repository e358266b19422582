import { invalidField } from '@retention/core';

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

const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f]/;

/** A free-text filter: 1 to `max` characters, no control characters (Postgres text holds no NUL). */
export function textParam(name: string, value: string, max: number): string {
  if (value.length < 1 || value.length > max) throw invalidField(name, `must be 1 to ${max} characters`);
  if (CONTROL_CHARACTERS.test(value)) throw invalidField(name, 'must not contain control characters');
  return value;
}
