import { describe, expect, it } from '@jest/globals';
import { sealSecret } from '@retention/core';
import { createLogger } from '@retention/runtime';
import { testSecretsKeyBytes } from '@retention/testkit';
import { OutboxDispatcher } from '../../../worker/src/dispatch/outbox-dispatcher.js';
import { useApi, workspaceWithToken } from '../harness.js';
import { dashboardClient, makeUser, signIn } from './support.js';

/**
 * What the dashboard's API says of a delivery skipped because its endpoint was off: when the
 * event was recorded (made skipped by the dispatcher), or when its retry was due (the failed
 * attempt before it no longer promises a next attempt). docs/webhooks.md, "While an endpoint is off".
 */
const api = useApi();
const call = (...args: Parameters<ReturnType<typeof dashboardClient>>) => dashboardClient(api.current.url)(...args);

const dispatch = () =>
  new OutboxDispatcher({
    db: api.current.db,
    logger: createLogger('test', 'silent'),
    delivered: () => undefined,
    batchSize: 500,
  }).dispatchBatch();

async function world() {
  const { workspaceId } = await workspaceWithToken(api.current, {
    processor: 'connected',
    customers: [{ key: 'c', subscriptions: [{ key: 's' }] }],
    campaigns: [
      { customer: 'c', currency: 'usd', amount_cents: 1000, decline_code: 'insufficient_funds', status: 'in_flight' },
    ],
  });
  const owner = await signIn(call, (await makeUser(api.current.db, workspaceId, 'owner')).email);
  const [campaignId] = await api.current.db('recovery_campaigns').where({ workspace_id: workspaceId }).pluck('id');
  const [endpoint] = await api.current
    .db('webhook_endpoints')
    .insert({
      workspace_id: workspaceId,
      name: 'Moved CRM',
      url: 'https://e.invalid/',
      signing_secret_sealed: sealSecret(testSecretsKeyBytes(), 'whsec_x'),
      created_at: new Date(Date.now() - 60_000),
    })
    .returning('id');
  return { workspaceId, owner, campaignId: campaignId as string, endpointId: endpoint.id as string };
}

describe('a delivery skipped because its endpoint was off', () => {
  it('recorded while it was off: skipped in the log with its reason and no next attempt, and in the timeline', async () => {
    const { owner, campaignId, endpointId } = await world();
    expect((await call('POST', `/webhooks/${endpointId}/disable`, { cookie: owner })).status).toBe(200);
    const endpoint = await call('GET', `/webhooks/${endpointId}`, { cookie: owner });
    expect(endpoint.body).toMatchObject({ enabled: false, disabled_at: expect.any(String) });
    expect((await call('POST', `/campaigns/${campaignId}/mark-lost`, { cookie: owner })).status).toBe(200);
    await dispatch();

    const log = await call('GET', `/webhooks/${endpointId}/deliveries`, { cookie: owner });
    expect(log.status).toBe(200);
    expect(log.body.data).toHaveLength(1);
    expect(log.body.data[0]).toMatchObject({
      event_type: 'recovery.lost',
      attempt: 1,
      outcome: 'skipped',
      http_status: null,
      error: 'skipped: the endpoint was off when this event was recorded',
      next_attempt_at: null,
    });
    expect(JSON.parse(log.body.data[0].request_body)).toMatchObject({ type: 'recovery.lost' });

    const detail = await call('GET', `/campaigns/${campaignId}`, { cookie: owner });
    // After "Marked lost by …", the action that recorded it at the same time.
    expect(detail.body.timeline.map((entry: { kind: string }) => entry.kind)).toEqual(['action', 'event']);
    expect(detail.body.timeline[1]).toMatchObject({
      type: 'recovery.lost',
      queued: false,
      deliveries: [
        {
          endpoint_name: 'Moved CRM',
          status: 'skipped',
          attempt_count: 1,
          // Its skipped line takes attempt 1; nothing was sent.
          attempts_sent: 0,
          skipped_reason: 'the endpoint was off when this event was recorded',
          // The skip is its last line; its reason is skipped_reason, not an error of an attempt.
          last_outcome: 'skipped',
          last_error: null,
        },
      ],
    });

    // Turned on: `disabled_at` is gone.
    const on = await call('POST', `/webhooks/${endpointId}/enable`, { cookie: owner });
    expect(on.body).toMatchObject({ enabled: true, disabled_at: null });
  });

  it('a failed attempt whose retry was skipped by turning the endpoint off shows no next attempt', async () => {
    const { workspaceId, owner, endpointId } = await world();
    const [event] = await api.current
      .db('events')
      .insert({ workspace_id: workspaceId, type: 'recovery.opened', data: { hello: 'world' } })
      .returning(['id', 'seq']);
    await api.current.db('event_outbox').where({ event_id: event.id }).delete();
    const retryAt = new Date(Date.now() + 5 * 60_000);
    const [delivery] = await api.current
      .db('webhook_deliveries')
      .insert({
        workspace_id: workspaceId,
        endpoint_id: endpointId,
        event_id: event.id,
        event_seq: event.seq,
        event_type: 'recovery.opened',
        status: 'pending',
        attempt_count: 1,
        next_attempt_at: retryAt,
      })
      .returning('id');
    await api.current.db('webhook_attempts').insert({
      delivery_id: delivery.id,
      endpoint_id: endpointId,
      event_type: 'recovery.opened',
      attempt: 1,
      outcome: 'failed',
      http_status: 503,
      error: 'HTTP 503',
      duration_ms: 12,
      attempted_at: new Date(Date.now() - 1000),
      next_attempt_at: retryAt,
      url: 'https://e.invalid/',
    });
    const before = await call('GET', `/webhooks/${endpointId}/deliveries`, { cookie: owner });
    expect(
      before.body.data.map((entry: { outcome: string; next_attempt_at: string | null }) => entry.next_attempt_at),
    ).toEqual([retryAt.toISOString()]);

    expect((await call('POST', `/webhooks/${endpointId}/disable`, { cookie: owner })).status).toBe(200);
    const after = await call('GET', `/webhooks/${endpointId}/deliveries`, { cookie: owner });
    expect(
      after.body.data.map((entry: { attempt: number; outcome: string; next_attempt_at: string | null }) => [
        entry.attempt,
        entry.outcome,
        entry.next_attempt_at,
      ]),
    ).toEqual([
      [2, 'skipped', null],
      [1, 'failed', null],
    ]);
  });
});
