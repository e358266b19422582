import type { Customer, ListEnvelope } from '@retention/core';
import type { Knex } from 'knex';
import type { Queryable } from '../connection.js';
import { customerJsonSql, type JsonText } from '../resource-json.js';
import { textParam } from './list-params.js';
import { listScope, opaqueKeysetPage } from './opaque-keyset.js';
import { listEnvelope } from './pagination.js';

/**
 * The dashboard's customers list: newest first by (created_at, id), filtered by an exact
 * e-mail (case-insensitive, customers_email_idx) or a tag (stored lowercase), keyset pages
 * through customers_list_idx.
 */

export interface CustomerListFilters {
  email?: string;
  tag?: string;
}

export const CUSTOMER_FILTER_PARAMS = ['email', 'tag'] as const;

export function customerListFilters(
  query: Partial<Record<(typeof CUSTOMER_FILTER_PARAMS)[number], string>>,
): CustomerListFilters {
  const filters: CustomerListFilters = {};
  if (query.email !== undefined) {
    filters.email = textParam('email', query.email, 320);
  }
  if (query.tag !== undefined) {
    filters.tag = textParam('tag', query.tag.trim().toLowerCase(), 100);
  }
  return filters;
}

export function customerListQuery(db: Queryable, workspaceId: string, filters: CustomerListFilters): Knex.QueryBuilder {
  const query = db('customers')
    .where('workspace_id', workspaceId)
    .orderBy([
      { column: 'created_at', order: 'desc' },
      { column: 'id', order: 'desc' },
    ])
    .select('created_at', 'id', db.raw(`${customerJsonSql('customers')}::text AS json`));
  if (filters.email !== undefined) query.whereRaw('lower(email) = lower(?)', [filters.email]);
  if (filters.tag !== undefined) query.whereRaw('tags @> ARRAY[?]::text[]', [filters.tag]);
  return query;
}

export async function customerListPage(
  db: Queryable,
  workspaceId: string,
  filters: CustomerListFilters,
  page: { limit: number; cursor?: string | undefined },
): Promise<JsonText<ListEnvelope<Customer>>> {
  const result = await opaqueKeysetPage<{ created_at: Date; id: string; json: string }>(
    customerListQuery(db, workspaceId, filters),
    {
      column: 'created_at',
      cursor: page.cursor,
      limit: page.limit,
      scope: listScope('customers', filters),
      ordered: true,
    },
  );
  return listEnvelope(result);
}
