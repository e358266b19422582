import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from '@jest/globals';
import { loadConfig, openSecret, ServiceError } from '@retention/core';
import {
  createWebhookSender,
  listDeliveryLog,
  resealSecrets,
  rollSigningSecret,
  sendTestWebhook,
  UNREADABLE_SECRET_ERROR,
  type WebhookSender,
} from '@retention/domain';
import { parseSignatureHeader, verifyWebhook } from '@retention/sdk';
import { eventually, storedSigningSecrets, testSecretsKey, testSecretsKeyBytes } from '@retention/testkit';
import { BASE_URL, numberedEvent, useWorld } from './support/world.js';

/**
 * Signing secrets are stored sealed with SECRETS_KEY and opened by the worker for each
 * delivery (docs/decisions.md, "Tokens and secrets"): deliveries are signed with the secrets
 * the API handed out, both during a roll's overlap, and a worker whose key is not the one they
 * were sealed with sends nothing, fails the attempt saying so, and retries per the schedule.
 */

const world = useWorld();
const ok = { kind: 'status', status: 204 } as const;
const otherKey = () => randomBytes(32);
const senders: WebhookSender[] = [];

function sender(): WebhookSender {
  const created = createWebhookSender({
    timeoutMs: 1000,
    baseUrl: BASE_URL,
    allowPrivateNetworks: true,
    ca: world.current.certificate.cert,
  });
  senders.push(created);
  return created;
}

afterAll(() => senders.forEach((created) => created.close()));

async function deliveryOf(endpointId: string) {
  return world.current.db('webhook_deliveries').where({ endpoint_id: endpointId }).first();
}

describe('deliveries signed with sealed secrets', () => {
  it('signs with the secret created, then with both during a roll overlap (a second roll refused), then with the new one alone', async () => {
    const { db, receiver, workspace } = world.current;
    const endpoint = await world.current.createEndpoint('/sealed-roll', { behaviour: ok });
    const stored = await storedSigningSecrets(db, endpoint.id);
    expect(JSON.stringify(stored.sealed)).not.toContain('whsec_');
    expect(stored.current).toBe(endpoint.secret);
    await world.current.startWorker();

    await world.current.record([numberedEvent(workspace)]);
    const [first] = await receiver.waitForRequests(endpoint.path, 1);
    expect(first!.problems).toEqual([]);
    expect(parseSignatureHeader(first!.headers['x-service-signature']).signatures).toHaveLength(1);

    const rolled = await rollSigningSecret(db, testSecretsKeyBytes(), {
      endpoint_id: endpoint.id,
      actor_id: workspace.ownerId,
      overlap_seconds: 3600,
    });
    expect(await storedSigningSecrets(db, endpoint.id)).toMatchObject({
      current: rolled.secret,
      previous: endpoint.secret,
    });
    await world.current.record([numberedEvent(workspace)]);
    const overlapping = (await receiver.waitForRequests(endpoint.path, 2))[1]!;
    const header = overlapping.headers['x-service-signature'];
    expect(parseSignatureHeader(header).signatures).toHaveLength(2);
    // Either secret verifies it: the receiver's (the old one), and the new one.
    expect(overlapping.problems).toEqual([]);
    expect(() => verifyWebhook(overlapping.rawBody, header, rolled.secret)).not.toThrow();
    expect(() => verifyWebhook(overlapping.rawBody, header, endpoint.secret)).not.toThrow();

    // Rolling again before the overlap ends would stop the old secret before the time promised:
    // refused, and the worker's next delivery still verifies with the receiver's old secret.
    const refused = await rollSigningSecret(db, testSecretsKeyBytes(), {
      endpoint_id: endpoint.id,
      actor_id: workspace.ownerId,
    }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(ServiceError);
    expect(refused).toMatchObject({
      type: 'conflict',
      message: expect.stringContaining(`still accepted until ${rolled.previous_secret_expires_at}`),
    });
    await world.current.record([numberedEvent(workspace)]);
    const stillOverlapping = (await receiver.waitForRequests(endpoint.path, 3))[2]!;
    expect(stillOverlapping.problems).toEqual([]);
    const stillHeader = stillOverlapping.headers['x-service-signature'];
    expect(() => verifyWebhook(stillOverlapping.rawBody, stillHeader, endpoint.secret)).not.toThrow();
    expect(() => verifyWebhook(stillOverlapping.rawBody, stillHeader, rolled.secret)).not.toThrow();

    // Ending the overlap on purpose, with no new one: the new secret alone signs.
    const again = await rollSigningSecret(db, testSecretsKeyBytes(), {
      endpoint_id: endpoint.id,
      actor_id: workspace.ownerId,
      end_overlap: true,
    });
    expect(again.accepted_secrets).toEqual([{ which: 'new', until: null }]);
    receiver.route(endpoint.path, { behaviour: ok, secret: again.secret });
    await world.current.record([numberedEvent(workspace)]);
    const alone = (await receiver.waitForRequests(endpoint.path, 4))[3]!;
    expect(alone.problems).toEqual([]);
    expect(parseSignatureHeader(alone.headers['x-service-signature']).signatures).toHaveLength(1);
    expect(() => verifyWebhook(alone.rawBody, alone.headers['x-service-signature'], rolled.secret)).toThrow();
  });
});

describe('a SECRETS_KEY that cannot open the secrets', () => {
  it('sends nothing, fails each attempt saying so, retries per the schedule and never disables the endpoint', async () => {
    const { receiver, workspace } = world.current;
    const endpoint = await world.current.createEndpoint('/wrong-key', { behaviour: ok });
    // More attempts than the ten consecutive failures that turn an endpoint off.
    const attempts = 12;
    const worker = await world.current.startWorker({
      env: {
        SECRETS_KEY: otherKey().toString('base64'),
        WEBHOOK_RETRY_DELAYS: Array(attempts - 1)
          .fill('50ms')
          .join(','),
      },
    });
    await world.current.record([numberedEvent(workspace)]);

    const delivery = await eventually(async () => {
      const row = await deliveryOf(endpoint.id);
      return row && row.status !== 'pending' ? row : null;
    }, 25_000);
    expect(delivery).toMatchObject({ status: 'failed', attempt_count: attempts });
    const log = await listDeliveryLog(world.current.db, endpoint.id);
    expect(log).toHaveLength(attempts);
    for (const entry of log) {
      expect(entry).toMatchObject({ outcome: 'failed', http_status: null, error: UNREADABLE_SECRET_ERROR });
    }
    // Each retry waited for its turn in the schedule: no tight loop.
    const times = log.map((entry) => Date.parse(entry.attempted_at)).sort((a, b) => a - b);
    for (let n = 1; n < times.length; n += 1) expect(times[n]! - times[n - 1]!).toBeGreaterThanOrEqual(40);
    expect(receiver.requestsTo(endpoint.path)).toEqual([]);

    const row = await world.current.db('webhook_endpoints').where({ id: endpoint.id }).first();
    expect(row).toMatchObject({ enabled: true, failure_count: 0, last_failure_at: null });
    const errors = worker.logs().filter((line) => line.level === 'error' && /SECRETS_KEY/.test(line.msg));
    expect(errors).toHaveLength(attempts);
    expect(errors[0]).toMatchObject({ delivery_id: delivery.id, endpoint_id: endpoint.id });
    expect(worker.rawLogs()).not.toContain(endpoint.secret);
  }, 40_000);

  it('leaves the delivery pending, and a worker with the right key delivers it, signed', async () => {
    const { db, receiver, workspace } = world.current;
    const endpoint = await world.current.createEndpoint('/key-restored', { behaviour: ok });
    const wrong = await world.current.startWorker({
      env: { SECRETS_KEY: otherKey().toString('base64'), WEBHOOK_RETRY_DELAYS: '50ms,1h' },
    });
    await world.current.record([numberedEvent(workspace)]);
    const waiting = await eventually(async () => {
      const row = await deliveryOf(endpoint.id);
      return row?.attempt_count === 2 && row.lease_expires_at === null ? row : null;
    });
    expect(waiting.status).toBe('pending');
    expect(waiting.next_attempt_at.getTime()).toBeGreaterThan(Date.now() + 3_000_000);
    await wrong.handle.close();

    // The operator sets the right key again; the retry falls due (an hour, made now).
    await db('webhook_deliveries').where({ id: waiting.id }).update({ next_attempt_at: db.fn.now() });
    await world.current.startWorker();
    const [request] = await receiver.waitForRequests(endpoint.path, 1);
    expect(request!.problems).toEqual([]);
    const log = await eventually(async () => {
      const entries = await listDeliveryLog(db, endpoint.id);
      return entries.length === 3 ? entries : null;
    });
    expect(log.map((entry) => [entry.attempt, entry.outcome])).toEqual([
      [3, 'succeeded'],
      [2, 'failed'],
      [1, 'failed'],
    ]);
  });

  it('Send test records a failed attempt and sends nothing; Roll secret needs no overlap to start afresh', async () => {
    const { db, receiver, workspace } = world.current;
    const endpoint = await world.current.createEndpoint('/test-wrong-key', { behaviour: ok });
    const key = otherKey();

    const entry = await sendTestWebhook(db, key, sender(), endpoint.id, workspace.ownerId);
    expect(entry).toMatchObject({ outcome: 'failed', http_status: null, error: UNREADABLE_SECRET_ERROR });
    expect(receiver.requestsTo(endpoint.path)).toEqual([]);

    // Keeping the old secret valid would need it opened: refused, nothing changed.
    const before = await storedSigningSecrets(db, endpoint.id);
    const refused = await rollSigningSecret(db, key, {
      endpoint_id: endpoint.id,
      actor_id: workspace.ownerId,
      overlap_seconds: 60,
    }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(ServiceError);
    expect(refused).toMatchObject({ type: 'conflict', message: expect.stringMatching(/SECRETS_KEY.*no overlap/) });
    expect((await storedSigningSecrets(db, endpoint.id)).sealed).toEqual(before.sealed);

    // With no overlap the endpoint gets a secret sealed with the key in use, which then signs.
    const rolled = await rollSigningSecret(db, key, { endpoint_id: endpoint.id, actor_id: workspace.ownerId });
    receiver.route(endpoint.path, { behaviour: ok, secret: rolled.secret });
    const sent = await sendTestWebhook(db, key, sender(), endpoint.id, workspace.ownerId);
    expect(sent).toMatchObject({ outcome: 'succeeded', http_status: 204 });
    const [request] = receiver.requestsTo(endpoint.path);
    expect(request!.problems).toEqual([]);
  });
});

describe('rotating SECRETS_KEY: the new key as SECRETS_KEY, the old one as SECRETS_KEY_PREVIOUS', () => {
  it('signs with the secrets sealed under the old key until the reseal, and with the new key alone after it', async () => {
    const { db, receiver, workspace } = world.current;
    // Sealed with the run's key: the old one.
    const endpoint = await world.current.createEndpoint('/rotation', { behaviour: ok });
    const newKey = otherKey().toString('base64');
    const rotating = { SECRETS_KEY: newKey, SECRETS_KEY_PREVIOUS: testSecretsKey() };
    const worker = await world.current.startWorker({ env: rotating });

    // Before the reseal: the worker, and Send test from a process with the same keys, sign
    // with the secret the receiver holds (the receiver checks every signature it gets).
    await world.current.record([numberedEvent(workspace)]);
    const [delivered] = await receiver.waitForRequests(endpoint.path, 1);
    expect(delivered!.problems).toEqual([]);
    const keys = loadConfig(rotating).secretsKey;
    const tested = await sendTestWebhook(db, keys, sender(), endpoint.id, workspace.ownerId);
    expect(tested).toMatchObject({ outcome: 'succeeded', http_status: 204 });
    expect(receiver.requestsTo(endpoint.path)[1]!.problems).toEqual([]);

    // The reseal, while the worker runs: the same secret, now sealed with the new key. (The
    // tests above left endpoints sealed under keys of their own, which reseal would rightly
    // refuse: they are done with, and go.)
    await db('webhook_endpoints').whereNot({ id: endpoint.id }).delete();
    await resealSecrets(db, keys);
    const row = await db('webhook_endpoints').where({ id: endpoint.id }).first();
    expect(openSecret(loadConfig({ SECRETS_KEY: newKey }).secretsKey, row.signing_secret_sealed)).toBe(endpoint.secret);
    await world.current.record([numberedEvent(workspace)]);
    expect((await receiver.waitForRequests(endpoint.path, 3))[2]!.problems).toEqual([]);
    await worker.handle.close();

    // SECRETS_KEY_PREVIOUS dropped: the new key alone signs.
    const after = await world.current.startWorker({ env: { SECRETS_KEY: newKey } });
    await world.current.record([numberedEvent(workspace)]);
    expect((await receiver.waitForRequests(endpoint.path, 4))[3]!.problems).toEqual([]);

    // No secret and no key in any log line.
    for (const logs of [worker.rawLogs(), after.rawLogs()]) {
      for (const secret of [endpoint.secret, newKey, testSecretsKey()]) expect(logs).not.toContain(secret);
    }
  });
});
