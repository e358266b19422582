import { Router } from 'express';
import { invalidField } from '@retention/core';
import {
  disconnectProcessor,
  processorSetup,
  removeProcessorKey,
  requestBackfill,
  retryParkedEvents,
  storedSigningSecret,
} from '@retention/domain';
import { connectStripe, HANDLED_EVENT_TYPES } from '@retention/processors';
import { actorOf, allow, signedIn, type DashboardContext } from './context.js';
import { bodyOf } from './json-body.js';

/**
 * Settings, Processor (owner only, like the CLI's `processor` commands, and through the same
 * functions): the URL to register in Stripe, connect with its signing secret and an optional
 * restricted key (none given keeps the stored one), remove the stored key, disconnect, start a
 * backfill, retry parked events, and the status with its progress.
 */
export function processorRoutes(context: DashboardContext): Router {
  const router = Router();
  const { db, config } = context;
  // With the event types to select on the Stripe endpoint: the adapter's own list, so the page
  // names exactly those it applies (docs/processor.md, "The endpoint in Stripe").
  const setup = async (workspaceId: string) => ({
    ...(await processorSetup(db, config.secretsKey, config.baseUrl, workspaceId)),
    stripe_event_types: HANDLED_EVENT_TYPES,
  });

  router.get('/processor', allow('manage_processor'), async (_req, res) => {
    res.json(await setup(signedIn(res).workspaceId));
  });

  router.post('/processor/connect', allow('manage_processor'), async (req, res) => {
    const body = bodyOf(req.body, ['webhook_secret', 'api_key', 'confirm_mode_switch']);
    if (body.webhook_secret !== undefined && typeof body.webhook_secret !== 'string')
      throw invalidField('webhook_secret', 'must be a string');
    if (body.api_key !== undefined && typeof body.api_key !== 'string')
      throw invalidField('api_key', 'must be a string');
    if (body.confirm_mode_switch !== undefined && typeof body.confirm_mode_switch !== 'boolean')
      throw invalidField('confirm_mode_switch', 'must be true or false');
    const { workspaceId } = signedIn(res);
    // No secret given (missing or ""): the stored one is kept, so changing only the key needs no
    // pasting of the secret again, as no key given keeps the stored key.
    const webhookSecret =
      body.webhook_secret === undefined || body.webhook_secret === ''
        ? await storedSigningSecret(db, config.secretsKey, workspaceId)
        : body.webhook_secret;
    await connectStripe(
      db,
      config,
      {
        workspace_id: workspaceId,
        webhook_secret: webhookSecret,
        ...(typeof body.api_key === 'string' && body.api_key !== '' && { api_key: body.api_key }),
        ...(body.confirm_mode_switch === true && { confirm_mode_switch: true }),
      },
      actorOf(req, res),
    );
    res.json(await setup(workspaceId));
  });

  router.post('/processor/disconnect', allow('manage_processor'), async (req, res) => {
    const { workspaceId } = signedIn(res);
    await disconnectProcessor(db, workspaceId, actorOf(req, res));
    res.json(await setup(workspaceId));
  });

  router.post('/processor/remove-key', allow('manage_processor'), async (req, res) => {
    bodyOf(req.body, []);
    const { workspaceId } = signedIn(res);
    await removeProcessorKey(db, workspaceId, actorOf(req, res));
    res.json(await setup(workspaceId));
  });

  router.post('/processor/sync', allow('manage_processor'), async (_req, res) => {
    const { workspaceId } = signedIn(res);
    await requestBackfill(db, workspaceId);
    res.json(await setup(workspaceId));
  });

  // Parked events given a new round of attempts: all, or the one `event_id` names (logged).
  router.post('/processor/retry', allow('manage_processor'), async (req, res) => {
    const body = bodyOf(req.body, ['event_id']);
    if (body.event_id !== undefined && typeof body.event_id !== 'string')
      throw invalidField('event_id', 'must be a Stripe event id (evt_…)');
    const { workspaceId } = signedIn(res);
    const { retried } = await retryParkedEvents(db, workspaceId, actorOf(req, res), {
      ...(typeof body.event_id === 'string' && { psp_event_id: body.event_id, field: 'event_id' }),
    });
    res.json({ retried, ...(await setup(workspaceId)) });
  });

  return router;
}
