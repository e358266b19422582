import { Router } from 'express';
import { invalidField, notFound, ServiceError, type EventType } from '@retention/core';
import {
  createEndpoint,
  deleteEndpoint,
  dismissEndpointAlert,
  getEndpoint,
  listDeliveryLogPage,
  listEndpoints,
  recoverDeliveries,
  RESEND_LEASE_MARGIN_MS,
  resendDelivery,
  rollSigningSecret,
  sendTestWebhook,
  enableEndpoint,
  disableEndpoint,
  endSecretOverlap,
  updateEndpoint,
  type UpdateEndpointInput,
  type WebhookEndpoint,
} from '@retention/domain';
import { actorOf, allow, signedIn, type DashboardContext } from './context.js';
import { bodyOf } from './json-body.js';
import { endpointView, endpointViews } from './views.js';
import { queryStrings } from './query-strings.js';
import { detailId } from './read-routes.js';

/** Settings, Outbound webhooks: everyone reads; owners and admins change, test and resend. */
export function webhookRoutes(context: DashboardContext): Router {
  const router = Router();
  const { db } = context;
  const manage = allow('manage_webhooks');

  /** An endpoint of the session's workspace; another workspace's id is not found. */
  async function ownEndpoint(workspaceId: string, id: string) {
    const endpoint = await getEndpoint(db, id);
    if (endpoint.workspace_id !== workspaceId) throw notFound(`No webhook endpoint with id ${id}`);
    return endpoint;
  }

  /**
   * A stale edit's refusal (`endpoint_changed`) carries the endpoint as the update's check saw it
   * under the row's lock: sent as `error.endpoint` in GET /webhooks/:id's shape, so the page shows
   * it as it shows a read (docs/dashboard-api.md, "Stale edits").
   */
  async function withEndpointView(error: unknown): Promise<unknown> {
    if (!(error instanceof ServiceError) || error.objects?.endpoint === undefined) return error;
    return new ServiceError(error.type, error.message, {
      ...(error.code !== undefined && { code: error.code }),
      objects: { endpoint: await endpointView(db, error.objects.endpoint as WebhookEndpoint) },
    });
  }

  router.get('/webhooks', async (_req, res) => {
    const data = await endpointViews(db, await listEndpoints(db, signedIn(res).workspaceId));
    res.json({ object: 'list', data, has_more: false, next_cursor: null });
  });

  router.post('/webhooks', manage, async (req, res) => {
    const body = bodyOf(req.body, ['name', 'url', 'events']);
    const { user, workspaceId } = signedIn(res);
    const created = await createEndpoint(
      db,
      context.config.secretsKey,
      {
        workspace_id: workspaceId,
        actor_id: user.id,
        name: body.name as string,
        url: body.url as string,
        ...(body.events !== undefined && { events: body.events as EventType[] }),
        allow_private_networks: context.config.webhookAllowPrivateNetworks,
      },
      actorOf(req, res),
    );
    const { secret, ...endpoint } = created;
    res.status(201).json({ ...(await endpointView(db, endpoint)), secret });
  });

  // The endpoint's page reads this: like the other detail reads, an id that is not a UUID is
  // not found (a mistyped address), where the changes below call it malformed (400).
  router.get('/webhooks/:id', async (req, res) => {
    const id = detailId(req.params.id, 'webhook endpoint');
    res.json(await endpointView(db, await ownEndpoint(signedIn(res).workspaceId, id)));
  });

  router.patch('/webhooks/:id', manage, async (req, res) => {
    const body = bodyOf(req.body, ['name', 'url', 'events', 'expected']);
    const { user, workspaceId } = signedIn(res);
    await ownEndpoint(workspaceId, String(req.params.id));
    const updated = await updateEndpoint(
      db,
      String(req.params.id),
      {
        actor_id: user.id,
        ...(body.name !== undefined && { name: body.name as string }),
        ...(body.url !== undefined && { url: body.url as string }),
        ...(body.events !== undefined && { events: body.events as EventType[] }),
        ...(body.expected !== undefined && { expected: body.expected as UpdateEndpointInput['expected'] }),
        allow_private_networks: context.config.webhookAllowPrivateNetworks,
      },
      actorOf(req, res),
    ).catch(async (error: unknown) => {
      throw await withEndpointView(error);
    });
    res.json(await endpointView(db, updated));
  });

  router.delete('/webhooks/:id', manage, async (req, res) => {
    const { user, workspaceId } = signedIn(res);
    await ownEndpoint(workspaceId, String(req.params.id));
    await deleteEndpoint(db, { id: String(req.params.id), actor_id: user.id }, actorOf(req, res));
    res.status(204).end();
  });

  for (const [action, change] of [
    ['enable', enableEndpoint],
    ['disable', disableEndpoint],
  ] as const) {
    router.post(`/webhooks/:id/${action}`, manage, async (req, res) => {
      const { user, workspaceId } = signedIn(res);
      await ownEndpoint(workspaceId, String(req.params.id));
      res.json(
        await endpointView(db, await change(db, { id: String(req.params.id), actor_id: user.id }, actorOf(req, res))),
      );
    });
  }

  router.post('/webhooks/:id/test', manage, async (req, res) => {
    const { user, workspaceId } = signedIn(res);
    await ownEndpoint(workspaceId, String(req.params.id));
    await context.manualSendLimit.admit(workspaceId);
    res.json(await sendTestWebhook(db, context.config.secretsKey, context.sender, String(req.params.id), user.id));
  });

  router.post('/webhooks/:id/roll-secret', manage, async (req, res) => {
    const { overlap_seconds, end_overlap } = bodyOf(req.body, ['overlap_seconds', 'end_overlap']);
    const { user, workspaceId } = signedIn(res);
    await ownEndpoint(workspaceId, String(req.params.id));
    res.json(
      await rollSigningSecret(
        db,
        context.config.secretsKey,
        {
          endpoint_id: String(req.params.id),
          actor_id: user.id,
          ...(overlap_seconds !== undefined && { overlap_seconds: overlap_seconds as number }),
          // Checked by rollSigningSecret: anything but a boolean is invalid_param end_overlap.
          ...(end_overlap !== undefined && { end_overlap: end_overlap as boolean }),
        },
        actorOf(req, res),
      ),
    );
  });

  // End the overlap now, without rolling: the secret the last roll replaced stops signing.
  router.post('/webhooks/:id/end-overlap', manage, async (req, res) => {
    const { user, workspaceId } = signedIn(res);
    await ownEndpoint(workspaceId, String(req.params.id));
    res.json(await endSecretOverlap(db, { endpoint_id: String(req.params.id), actor_id: user.id }, actorOf(req, res)));
  });

  router.post('/webhooks/:id/recover', manage, async (req, res) => {
    const { since } = bodyOf(req.body, ['since']);
    if (typeof since !== 'string' || !/^\d{4}-\d{2}-\d{2}T/.test(since)) {
      throw invalidField('since', 'must be an ISO 8601 timestamp such as 2026-11-25T08:00:00Z');
    }
    const { user, workspaceId } = signedIn(res);
    await ownEndpoint(workspaceId, String(req.params.id));
    res.json(
      await recoverDeliveries(
        db,
        { endpoint_id: String(req.params.id), actor_id: user.id, since: new Date(since) },
        actorOf(req, res),
      ),
    );
  });

  router.post('/webhooks/:id/dismiss-alert', manage, async (req, res) => {
    const { workspaceId } = signedIn(res);
    await ownEndpoint(workspaceId, String(req.params.id));
    await dismissEndpointAlert(db, String(req.params.id));
    res.json(await endpointView(db, await getEndpoint(db, String(req.params.id))));
  });

  router.post('/deliveries/:id/resend', manage, async (req, res) => {
    const { user, workspaceId } = signedIn(res);
    await context.manualSendLimit.admit(workspaceId);
    res.json(
      await resendDelivery(db, context.config.secretsKey, context.sender, {
        delivery_id: String(req.params.id),
        actor_id: user.id,
        workspace_id: workspaceId,
        lease_ms: context.config.webhookTimeoutMs + RESEND_LEASE_MARGIN_MS,
      }),
    );
  });

  router.get('/webhooks/:id/deliveries', async (req, res) => {
    await ownEndpoint(signedIn(res).workspaceId, String(req.params.id));
    const query = queryStrings(req.url, ['outcome', 'event_type', 'cursor']);
    res.json({ object: 'list', ...(await listDeliveryLogPage(db, String(req.params.id), query)) });
  });

  return router;
}
