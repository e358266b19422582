import { EVENT_TYPES } from '@retention/core';
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

export async function endpointViews(db: Queryable, endpoints: WebhookEndpoint[]) {
  const alerts = await endpointAlerts(
    db,
    endpoints.map((endpoint) => endpoint.id),
  );
  return endpoints.map((endpoint) => ({ ...endpoint, alert: alerts.get(endpoint.id) ?? null }));
}

export async function endpointView(db: Queryable, endpoint: WebhookEndpoint) {
  return (await endpointViews(db, [endpoint]))[0]!;
}
