import { EVENT_TYPES, toIsoMillis } from '@retention/core';
import type { Queryable } from '@retention/db';
import {
  endpointAlerts,
  getWorkspace,
  toAccountUser,
  type AccountUserRow,
  type WebhookEndpoint,
} from '@retention/domain';

/** The shapes of docs/dashboard-api.md that more than one route answers with. */

export async function workspaceView(db: Queryable, workspaceId: string) {
  const workspace = await getWorkspace(db, workspaceId);
  return {
    id: workspace.id,
    name: workspace.name,
    display_currency: workspace.display_currency,
    processor_status: workspace.processor,
  };
}

export async function signedInView(db: Queryable, user: AccountUserRow) {
  return { user: toAccountUser(user), workspace: await workspaceView(db, user.workspace_id) };
}

export const EVENT_TYPE_LIST = [...EVENT_TYPES];

/**
 * An endpoint as the dashboard shows it: the API's, with its auto-disable alert and, while it
 * is off, since when (`disabled_at`: the page's Turn on says that events recorded since then are
 * in its log as skipped, for Retry failed since…). The public API's endpoint is unchanged.
 */
export async function endpointViews(db: Queryable, endpoints: WebhookEndpoint[]) {
  const ids = endpoints.map((endpoint) => endpoint.id);
  const alerts = await endpointAlerts(db, ids);
  const off = ids.length === 0 ? [] : await endpointsOffSince(db, ids);
  const offSince = new Map(off.map((row) => [row.id, toIsoMillis(row.disabled_at)]));
  return endpoints.map((endpoint) => ({
    ...endpoint,
    alert: alerts.get(endpoint.id) ?? null,
    disabled_at: offSince.get(endpoint.id) ?? null,
  }));
}

function endpointsOffSince(db: Queryable, ids: string[]) {
  return db('webhook_endpoints')
    .whereIn('id', ids)
    .where({ enabled: false })
    .whereNotNull('disabled_at')
    .select<Array<{ id: string; disabled_at: Date }>>('id', 'disabled_at');
}

export async function endpointView(db: Queryable, endpoint: WebhookEndpoint) {
  return (await endpointViews(db, [endpoint]))[0]!;
}
