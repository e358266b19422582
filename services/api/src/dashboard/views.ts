import { EVENT_TYPES } from '@retention/core';
import type { ProcessorMode } from '@retention/core/processor-modes';
import type { Queryable } from '@retention/db';
import {
  endpointsOff,
  getWorkspace,
  toAccountUser,
  type AccountUserRow,
  type ConnectionRow,
  type WebhookEndpoint,
} from '@retention/domain';

/** The shapes of docs/dashboard-api.md that more than one route answers with. */

export async function workspaceView(db: Queryable, workspaceId: string) {
  const [workspace, stripe] = await Promise.all([getWorkspace(db, workspaceId), stripeFacts(db, workspaceId)]);
  return {
    id: workspace.id,
    name: workspace.name,
    display_currency: workspace.display_currency,
    processor_status: workspace.processor,
    ...stripe,
  };
}

/**
 * What every page needs of the workspace's Stripe connection, in one read:
 * - `processor_key_rejected`: Stripe refused the stored key (401), so every page warns owners and
 *   admins that outbound webhooks are paused (docs/dashboard-ui.md, "Key refused"), not the
 *   Processor page alone;
 * - `stripe_mode`: the connection's mode (`test`, `live`), null without a connection or before
 *   its mode is known, so a customer, subscription or invoice mirrored from Stripe links to its
 *   page in Stripe's dashboard, in the right mode (docs/dashboard-ui.md, "View in Stripe").
 */
async function stripeFacts(
  db: Queryable,
  workspaceId: string,
): Promise<{ processor_key_rejected: boolean; stripe_mode: ProcessorMode | null }> {
  const connection: Pick<ConnectionRow, 'status' | 'disconnected_reason' | 'mode'> | undefined = await db(
    'processor_connections',
  )
    .where({ workspace_id: workspaceId })
    .first('status', 'disconnected_reason', 'mode');
  return {
    processor_key_rejected: connection?.status === 'disconnected' && connection.disconnected_reason === 'key_rejected',
    stripe_mode: connection?.mode ?? null,
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
