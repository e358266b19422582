import { notFound } from '@retention/core';
import type { Queryable } from '../connection.js';
import type { CancelSessionDetailView, CustomerDetailView } from '../dashboard-views.js';
import {
  campaignJsonSql,
  cancelSessionJsonSql,
  customerJsonSql,
  JsonText,
  subscriptionJsonSql,
  winbackSummaryJsonSql,
  type EmbeddedJson,
} from '../resource-json.js';
import { eventTimelineSql } from './event-timeline.js';

/**
 * The dashboard's customer and cancel-session detail pages (docs/dashboard-api.md, "Data
 * pages"). Another workspace's id is not found. Each part is one index range: subscriptions by
 * subscriptions_customer_idx, campaigns by recovery_campaigns_customer_idx, cancel sessions and
 * win-backs by their (workspace_id, customer_id, time) indexes.
 */

/** How many of a customer's campaigns, cancel sessions and win-backs the detail shows, newest first. */
export const CUSTOMER_DETAIL_RECENT = 50;

/**
 * The newest rows of one of the customer's tables as a JSON array (`[]` when none), built by
 * Postgres: `json` is the row's JSON expression over `alias`, `order` its list order.
 */
function recentJsonSql(table: string, alias: string, json: string, order: string, limit?: number): string {
  return `coalesce((
      SELECT json_agg(recent.json ORDER BY ${order.replaceAll(`${alias}.`, 'recent.')})
        FROM (SELECT ${alias}.*, ${json} AS json FROM ${table} ${alias}
               WHERE ${alias}.workspace_id = c.workspace_id AND ${alias}.customer_id = c.id
               ORDER BY ${order}${limit === undefined ? '' : ` LIMIT ${limit}`}) recent
    ), '[]'::json)`;
}

/**
 * One statement, as /api/v1's customer detail: Postgres builds the whole answer, so the API
 * neither waits on five round trips nor maps a hundred rows.
 */
export async function customerDetailView(
  db: Queryable,
  workspaceId: string,
  customerId: string,
): Promise<JsonText<CustomerDetailView>> {
  const withEmail: EmbeddedJson = [['customer_email', 'c.email']];
  const json = customerJsonSql('c', [
    ['subscriptions', recentJsonSql('subscriptions', 's', subscriptionJsonSql('s'), 's.created_at DESC, s.id DESC')],
    [
      'campaigns',
      recentJsonSql(
        'recovery_campaigns',
        'k',
        campaignJsonSql('k', withEmail),
        'k.first_failed_at DESC, k.id DESC',
        CUSTOMER_DETAIL_RECENT,
      ),
    ],
    [
      'cancel_sessions',
      recentJsonSql(
        'cancel_sessions',
        'x',
        cancelSessionJsonSql('x', withEmail),
        'x.created_at DESC, x.id DESC',
        CUSTOMER_DETAIL_RECENT,
      ),
    ],
    [
      'winbacks',
      recentJsonSql(
        'winbacks',
        'w',
        winbackSummaryJsonSql('w'),
        'w.recorded_at DESC, w.id DESC',
        CUSTOMER_DETAIL_RECENT,
      ),
    ],
  ]);
  const row = await db('customers as c')
    .where({ 'c.workspace_id': workspaceId, 'c.id': customerId })
    .first<{ json: string } | undefined>(db.raw(`${json}::text AS json`));
  if (!row) throw notFound(`No customer with id ${customerId}`);
  return new JsonText(row.json);
}

/**
 * One statement, as the customer's detail: the session as the API shows it, with its customer,
 * its subscription (null when it had none) and its events' timeline (as a campaign's: one
 * expression, event-timeline.ts) built beside it by Postgres.
 */
export async function cancelSessionDetailView(
  db: Queryable,
  workspaceId: string,
  sessionId: string,
): Promise<JsonText<CancelSessionDetailView>> {
  const json = cancelSessionJsonSql('x', [
    [
      'customer',
      `(SELECT ${customerJsonSql('c')} FROM customers c WHERE c.workspace_id = x.workspace_id AND c.id = x.customer_id)`,
    ],
    [
      'subscription',
      `(SELECT ${subscriptionJsonSql('s')} FROM subscriptions s WHERE s.workspace_id = x.workspace_id AND s.id = x.subscription_id)`,
    ],
    ['timeline', eventTimelineSql('x.workspace_id', 'session_id', 'x.id')],
  ]);
  const row = await db('cancel_sessions as x')
    .where({ 'x.workspace_id': workspaceId, 'x.id': sessionId })
    .first<{ json: string } | undefined>(db.raw(`${json}::text AS json`));
  if (!row) throw notFound(`No cancel session with id ${sessionId}`);
  return new JsonText(row.json);
}
