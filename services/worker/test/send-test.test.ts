import { afterAll, describe, expect, it } from '@jest/globals';
import { ServiceError } from '@retention/core';
import {
  createWebhookSender,
  getEndpoint,
  listDeliveryLog,
  sendTestWebhook,
  disableEndpoint,
  type WebhookSender,
} from '@retention/domain';
import { BASE_URL, useWorld } from './support/world.js';
import { testSecretsKeyBytes } from '@retention/testkit';

const world = useWorld();
const senders: WebhookSender[] = [];

function sender(allowPrivateNetworks = true): WebhookSender {
  const created = createWebhookSender({
    timeoutMs: 1000,
    baseUrl: BASE_URL,
    allowPrivateNetworks,
    ca: world.current.certificate.cert,
  });
  senders.push(created);
  return created;
}

afterAll(() => senders.forEach((created) => created.close()));

describe('Send test', () => {
  it('POSTs a signed ping, records it in the log, and leaves the failure count alone', async () => {
    const { db, receiver, workspace } = world.current;
    const endpoint = await world.current.createEndpoint('/ping', {
      behaviour: { kind: 'status', status: 200, body: 'pong' },
    });
    await db('webhook_endpoints').where({ id: endpoint.id }).update({ failure_count: 3 });

    const entry = await sendTestWebhook(db, testSecretsKeyBytes(), sender(), endpoint.id, workspace.adminId);
    expect(entry).toEqual({
      id: expect.any(String),
      object: 'webhook_attempt',
      delivery_id: expect.any(String),
      event_id: null,
      event_type: 'ping',
      attempt: 1,
      outcome: 'succeeded',
      http_status: 200,
      error: null,
      response_body: 'pong',
      duration_ms: expect.any(Number),
      attempted_at: expect.stringMatching(/Z$/),
      next_attempt_at: null,
      url: endpoint.url,
    });
    const [request] = receiver.requestsTo(endpoint.path);
    expect(request!.problems).toEqual([]);
    expect(request!.body).toEqual({ type: 'ping', created_at: expect.any(String), data: { test: true } });
    expect(await listDeliveryLog(db, endpoint.id)).toEqual([entry]);
    expect(await getEndpoint(db, endpoint.id)).toMatchObject({
      failure_count: 3,
      last_success_at: null,
      last_failure_at: null,
    });
  });

  it('reports a failing receiver as the result, not as an error', async () => {
    const { db, workspace } = world.current;
    const endpoint = await world.current.createEndpoint('/ping-500', {
      behaviour: { kind: 'status', status: 500, body: 'nope' },
    });
    const entry = await sendTestWebhook(db, testSecretsKeyBytes(), sender(), endpoint.id, workspace.ownerId);
    expect(entry).toMatchObject({ outcome: 'failed', http_status: 500, error: 'HTTP 500', response_body: 'nope' });
    expect(await getEndpoint(db, endpoint.id)).toMatchObject({ failure_count: 0, enabled: true });
  });

  it('works for a disabled endpoint of a disconnected workspace', async () => {
    const { db, receiver, disconnected } = world.current;
    const endpoint = await world.current.createEndpoint(
      '/ping-disconnected',
      { behaviour: { kind: 'status', status: 204 } },
      { workspace: disconnected },
    );
    await disableEndpoint(db, { id: endpoint.id, actor_id: disconnected.ownerId });
    expect(await sendTestWebhook(db, testSecretsKeyBytes(), sender(), endpoint.id, disconnected.ownerId)).toMatchObject(
      {
        outcome: 'succeeded',
        http_status: 204,
      },
    );
    expect(receiver.requestsTo(endpoint.path)).toHaveLength(1);
  });

  it('refuses a member, and refuses a private address without connecting', async () => {
    const { db, receiver, workspace } = world.current;
    const endpoint = await world.current.createEndpoint('/ping-guarded', {
      behaviour: { kind: 'status', status: 200 },
    });
    await expect(sendTestWebhook(db, testSecretsKeyBytes(), sender(), endpoint.id, workspace.memberId)).rejects.toThrow(
      ServiceError,
    );
    const entry = await sendTestWebhook(db, testSecretsKeyBytes(), sender(false), endpoint.id, workspace.ownerId);
    expect(entry).toMatchObject({ outcome: 'failed', http_status: null });
    expect(entry.error).toMatch(/^refused: localhost does not resolve to a public address/);
    expect(JSON.stringify(entry)).not.toMatch(/127\.0\.0\.1|::1|loopback/);
    expect(receiver.requestsTo(endpoint.path)).toEqual([]);
  });
});
