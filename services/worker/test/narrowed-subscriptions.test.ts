import { describe, expect, it } from '@jest/globals';
import { updateEndpoint } from '@retention/domain';
import { eventually } from '@retention/testkit';
import { eventsOfEveryType, numberedEvent, useWorld, type TestEndpoint } from './support/world.js';

const world = useWorld();

async function deliveryOf(endpoint: TestEndpoint, eventType: string) {
  return world.current.db('webhook_deliveries').where({ endpoint_id: endpoint.id, event_type: eventType }).first();
}

async function lastLine(endpoint: TestEndpoint, eventType: string) {
  return world.current
    .db('webhook_attempts')
    .where({ endpoint_id: endpoint.id, event_type: eventType })
    .orderBy('attempt', 'desc')
    .first();
}

const cancelEvent = () => eventsOfEveryType(world.current.workspace).find((event) => event.type === 'cancel.saved')!;

describe('pending deliveries no longer subscribed', () => {
  it('are skipped, with the reason, when the endpoint is narrowed to other event types', async () => {
    const endpoint = await world.current.createEndpoint('/narrowed', { behaviour: { kind: 'status', status: 503 } });
    await world.current.startWorker({ env: { WEBHOOK_RETRY_DELAYS: '10m' } });
    await world.current.record([cancelEvent(), numberedEvent(world.current.workspace)]);
    await eventually(async () => (await deliveryOf(endpoint, 'cancel.saved'))?.attempt_count === 1);
    await eventually(async () => (await deliveryOf(endpoint, 'reactivation.sent'))?.attempt_count === 1);

    await updateEndpoint(world.current.db, endpoint.id, {
      actor_id: world.current.workspace.ownerId,
      events: ['reactivation.sent', 'recovery.opened'],
    });
    expect(await deliveryOf(endpoint, 'cancel.saved')).toMatchObject({ status: 'skipped', next_attempt_at: null });
    expect(await lastLine(endpoint, 'cancel.saved')).toMatchObject({
      outcome: 'skipped',
      error: 'skipped: the endpoint no longer subscribes to this event type',
    });
    // Still subscribed: still retried.
    expect(await deliveryOf(endpoint, 'reactivation.sent')).toMatchObject({ status: 'pending' });
  });

  it('are skipped at claim time too: a subscription narrowed behind our back, a processor disconnected', async () => {
    const narrowed = await world.current.createEndpoint('/narrowed-later', {
      behaviour: { kind: 'status', status: 503 },
    });
    const disconnected = await world.current.createEndpoint('/disconnected-later', {
      behaviour: { kind: 'status', status: 503 },
    });
    await world.current.startWorker({ env: { WEBHOOK_RETRY_DELAYS: '400ms' } });
    await world.current.record([cancelEvent()]);
    await eventually(async () => (await deliveryOf(narrowed, 'cancel.saved'))?.attempt_count === 1);
    await eventually(async () => (await deliveryOf(disconnected, 'cancel.saved'))?.attempt_count === 1);
    await world.current
      .db('webhook_endpoints')
      .where({ id: narrowed.id })
      .update({ event_types: world.current.db.raw("ARRAY['recovery.opened']::text[]") });
    await world.current
      .db('workspaces')
      .where({ id: world.current.workspace.id })
      .update({ processor_status: 'disconnected' });
    try {
      await eventually(async () => (await deliveryOf(narrowed, 'cancel.saved'))?.status === 'skipped');
      expect(await lastLine(narrowed, 'cancel.saved')).toMatchObject({
        outcome: 'skipped',
        error: 'skipped: the endpoint no longer subscribes to this event type',
      });
      await eventually(async () => (await deliveryOf(disconnected, 'cancel.saved'))?.status === 'skipped');
      expect(await lastLine(disconnected, 'cancel.saved')).toMatchObject({
        outcome: 'skipped',
        error: "skipped: the workspace's payment processor is disconnected",
      });
      // Nothing went out after the change: one request each, the first attempt.
      expect(world.current.receiver.requestsTo(narrowed.path)).toHaveLength(1);
      expect(world.current.receiver.requestsTo(disconnected.path)).toHaveLength(1);
    } finally {
      await world.current
        .db('workspaces')
        .where({ id: world.current.workspace.id })
        .update({ processor_status: 'connected' });
    }
  });
});
