import { EVENT_TYPES } from '@retention/core';
import type { Queryable } from '@retention/db';
import {
  endpointsOff,
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
    // Stripe refused the stored key (401): every page warns owners and admins that outbound
    // webhooks are paused (docs/dashboard-ui.md, "Key refused"), not the Processor page alone.
    processor_key_rejected: await processorKeyRejected(db, workspaceId),
  };
}

async function processorKeyRejected(db: Queryable, workspaceId: string): Promise<boolean> {
  const rejected: { id: string } | undefined = await db('processor_connections')
    .where({ workspace_id: workspaceId, status: 'disconnected', disconnected_reason: 'key_rejected' })
    .first('id');
  return rejected !== undefined;
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
  // Only an endpoint that is off has either: none off, no statement.
  const off = await endpointsOff(
    db,
    endpoints.filter((endpoint) => !endpoint.enabled).map((endpoint) => endpoint.id),
  );
  return endpoints.map((endpoint) => ({
    ...endpoint,
    alert: off.get(endpoint.id)?.alert ?? null,
    disabled_at: off.get(endpoint.id)?.disabled_at ?? null,
  }));
}

export async function endpointView(db: Queryable, endpoint: WebhookEndpoint) {
  return (await endpointViews(db, [endpoint]))[0]!;
}
