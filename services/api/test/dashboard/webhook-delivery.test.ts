import { randomBytes } from 'node:crypto';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import express from 'express';
import Stripe from 'stripe';
import { loadConfig } from '@retention/core';
import { createWebhookSender, type WebhookSender } from '@retention/domain';
import { createLogger, createRedis, type Redis } from '@retention/runtime';
import { verifyWebhook } from '@retention/sdk';
import { redisKeyPrefix, runId, TEST_REDIS_URL, testSecretsKey, useTestDatabase } from '@retention/testkit';
import { errorHandler } from '../../src/middleware/errors.js';
import { dashboardApi, DASHBOARD_API_PREFIX } from '../../src/dashboard/router.js';
import { createTestCertificate, type TestCertificate } from '../../../worker/test/support/certificate.js';
import { Receiver } from '../../../worker/test/support/receiver.js';
import { dashboardClient, team } from './support.js';

/**
 * Send test, Resend and Roll secret against a real local HTTPS receiver: the dashboard's router
 * in a server of this file's own, whose sender trusts the receiver's self-signed certificate.
 */
const database = useTestDatabase();
let server: Server;
let redis: Redis;
let sender: WebhookSender;
let certificate: TestCertificate;
let receiver: Receiver;
let url = '';
const call = (...args: Parameters<ReturnType<typeof dashboardClient>>) => dashboardClient(url)(...args);

beforeAll(async () => {
  const config = loadConfig({
    SECRETS_KEY: testSecretsKey(),
    DATABASE_URL: database.current.url,
    REDIS_URL: TEST_REDIS_URL,
    REDIS_KEY_PREFIX: `${redisKeyPrefix(runId())}-${randomBytes(4).toString('hex')}`,
  });
  certificate = await createTestCertificate();
  receiver = await Receiver.start(certificate, config.baseUrl);
  redis = createRedis(config.redisUrl, 'command', 'dashboard-delivery-test');
  sender = createWebhookSender({
    timeoutMs: 5000,
    baseUrl: config.baseUrl,
    allowPrivateNetworks: true,
    ca: certificate.cert,
  });
  const logger = createLogger('api', 'silent');
  const app = express();
  app.use(DASHBOARD_API_PREFIX, dashboardApi({ config, db: database.current.db, redis, logger, sender }));
  app.use(errorHandler(logger));
  server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  sender.close();
  redis.disconnect();
  await receiver.close();
  await certificate.remove();
});

/** A delivery of a made-up recovery.opened event that the worker gave up on after `attempts`. */
async function failedDelivery(workspaceId: string, endpointId: string, attempts: number): Promise<{ id: string }> {
  const db = database.current.db;
  const [event] = await db('events')
    .insert({ workspace_id: workspaceId, type: 'recovery.opened', data: { hello: 'world' } })
    .returning(['id']);
  const [delivery] = await db('webhook_deliveries')
    .insert({
      workspace_id: workspaceId,
      endpoint_id: endpointId,
      event_id: event.id,
      event_type: 'recovery.opened',
      status: 'failed',
      attempt_count: attempts,
      completed_at: new Date(),
    })
    .returning(['id']);
  return delivery;
}

describe('webhook actions against a real HTTPS receiver', () => {
  it('Send test, Resend a failed delivery, and Roll secret with an overlap signing with both secrets', async () => {
    const db = database.current.db;
    const { admin, member, workspace } = await team(db, call, 'Receiver');
    const created = await call('POST', '/webhooks', {
      cookie: admin.cookie,
      body: { name: 'Local', url: receiver.url('/hook') },
    });
    expect(created.status).toBe(201);
    receiver.route('/hook', { secret: created.body.secret, behaviour: { kind: 'status', status: 200, body: 'ok' } });

    const tested = await call('POST', `/webhooks/${created.body.id}/test`, { cookie: admin.cookie });
    expect(tested.body).toMatchObject({ outcome: 'succeeded', http_status: 200, error: null, response_body: 'ok' });
    expect(tested.body.duration_ms).toBeGreaterThanOrEqual(0);

    // A delivery the worker gave up on.
    const delivery = await failedDelivery(workspace.id, created.body.id, 9);
    expect((await call('POST', `/deliveries/${delivery.id}/resend`, { cookie: member.cookie })).status).toBe(403);
    const resent = await call('POST', `/deliveries/${delivery.id}/resend`, { cookie: admin.cookie });
    expect(resent.status).toBe(200);
    expect(resent.body).toMatchObject({
      delivery_id: delivery.id,
      attempt: 10,
      outcome: 'succeeded',
      http_status: 200,
    });
    const received = (await receiver.waitForRequests('/hook', 2))[1]!;
    expect(verifyWebhook(received.rawBody, received.headers['x-service-signature'], created.body.secret).type).toBe(
      'recovery.opened',
    );
    expect(await db('webhook_deliveries').where({ id: delivery.id }).first()).toMatchObject({
      status: 'succeeded',
      lease_expires_at: null,
    });
    const log = await call('GET', `/webhooks/${created.body.id}/deliveries?event_type=recovery.opened`, {
      cookie: member.cookie,
    });
    expect(log.body.data).toHaveLength(1);
    expect(log.body.data[0].request_body).toBe(received.rawBody.toString('utf8'));

    const rolled = await call('POST', `/webhooks/${created.body.id}/roll-secret`, {
      cookie: admin.cookie,
      body: { overlap_seconds: 600 },
    });
    receiver.route('/hook', { secret: rolled.body.secret, behaviour: { kind: 'status', status: 200 } });
    await call('POST', `/deliveries/${delivery.id}/resend`, { cookie: admin.cookie });
    const overlapped = (await receiver.waitForRequests('/hook', 3))[2]!;
    const header = overlapped.headers['x-service-signature'] as string;
    expect(header.match(/v1=/g)).toHaveLength(2);
    for (const secret of [rolled.body.secret, created.body.secret]) {
      expect(verifyWebhook(overlapped.rawBody, header, secret).type).toBe('recovery.opened');
      // Stripe's own verifier, which keys the HMAC with the whole secret as we do.
      const stripeEvent = Stripe.webhooks.constructEvent(overlapped.rawBody, header, secret) as unknown as {
        type: string;
      };
      expect(stripeEvent.type).toBe('recovery.opened');
    }
    // The receiver also checks event data against the catalog; this test's event carries a
    // made-up payload, so only the transport and signature checks apply here.
    expect(receiver.problems().filter((problem) => !/: data/.test(problem))).toEqual([]);
    const ping = await db('webhook_deliveries').where({ endpoint_id: created.body.id, event_type: 'ping' }).first();
    expect((await call('POST', `/deliveries/${ping.id}/resend`, { cookie: admin.cookie })).status).toBe(400);
    // A worker's attempt in flight (its lease unexpired): a resend waits for it, nothing is sent.
    const sentBefore = receiver.requestsTo('/hook').length;
    await db('webhook_deliveries')
      .where({ id: delivery.id })
      .update({
        status: 'pending',
        next_attempt_at: new Date(),
        completed_at: null,
        attempt_started_at: new Date(),
        lease_expires_at: new Date(Date.now() + 60_000),
      });
    const inFlight = await call('POST', `/deliveries/${delivery.id}/resend`, { cookie: admin.cookie });
    expect(inFlight.status).toBe(409);
    expect(receiver.requestsTo('/hook')).toHaveLength(sentBefore);
    const other = await team(db, call, 'Other');
    expect((await call('POST', `/deliveries/${delivery.id}/resend`, { cookie: other.admin.cookie })).status).toBe(404);
  });

  it('a Resend that succeeds resets the failure count, as any delivery that succeeds does; one that fails leaves it', async () => {
    const db = database.current.db;
    const { admin, workspace } = await team(db, call, 'Counted');
    const created = await call('POST', '/webhooks', {
      cookie: admin.cookie,
      body: { name: 'Counted', url: receiver.url('/counted') },
    });
    const endpoint = () => db('webhook_endpoints').where({ id: created.body.id }).first();
    const resend = async (status: number) => {
      receiver.route('/counted', { secret: created.body.secret, behaviour: { kind: 'status', status } });
      const delivery = await failedDelivery(workspace.id, created.body.id, 2);
      return call('POST', `/deliveries/${delivery.id}/resend`, { cookie: admin.cookie });
    };
    // Two deliveries failed in a row, as the worker counts them.
    await db('webhook_endpoints').where({ id: created.body.id }).update({ failure_count: 2 });

    expect((await resend(500)).body).toMatchObject({ outcome: 'failed', http_status: 500 });
    expect((await endpoint()).failure_count).toBe(2);
    expect((await resend(200)).body).toMatchObject({ outcome: 'succeeded', http_status: 200 });
    expect(await endpoint()).toMatchObject({ failure_count: 0, enabled: true });
    expect((await endpoint()).last_success_at).not.toBeNull();
  });

  it("an attempt made before the endpoint's URL was edited is logged with the URL it went to, not the new one", async () => {
    const db = database.current.db;
    const { admin, member, workspace } = await team(db, call, 'Moved');
    const oldUrl = receiver.url('/old-hook');
    const newUrl = receiver.url('/new-hook');
    const created = await call('POST', '/webhooks', { cookie: admin.cookie, body: { name: 'Moving', url: oldUrl } });
    expect(created.status).toBe(201);
    for (const path of ['/old-hook', '/new-hook']) {
      receiver.route(path, { secret: created.body.secret, behaviour: { kind: 'status', status: 200, body: 'ok' } });
    }
    const before = await call('POST', `/webhooks/${created.body.id}/test`, { cookie: admin.cookie });
    expect(before.body).toMatchObject({ outcome: 'succeeded', url: oldUrl });

    const edited = await call('PATCH', `/webhooks/${created.body.id}`, { cookie: admin.cookie, body: { url: newUrl } });
    expect(edited.status).toBe(200);
    expect(edited.body.url).toBe(newUrl);
    const after = await call('POST', `/webhooks/${created.body.id}/test`, { cookie: admin.cookie });
    expect(after.body).toMatchObject({ outcome: 'succeeded', url: newUrl });
    const delivery = await failedDelivery(workspace.id, created.body.id, 1);
    const resent = await call('POST', `/deliveries/${delivery.id}/resend`, { cookie: admin.cookie });
    expect(resent.body).toMatchObject({ outcome: 'succeeded', url: newUrl });
    expect(receiver.requestsTo('/old-hook')).toHaveLength(1);
    expect(receiver.requestsTo('/new-hook')).toHaveLength(2);

    const log = await call('GET', `/webhooks/${created.body.id}/deliveries`, { cookie: member.cookie });
    expect(log.status).toBe(200);
    // Newest first: the resend and the second test went to the new URL, the first test to the old.
    expect(log.body.data.map((entry: { id: string; url: string }) => [entry.id, entry.url])).toEqual([
      [resent.body.id, newUrl],
      [after.body.id, newUrl],
      [before.body.id, oldUrl],
    ]);

    // A line whose URL nobody recorded (logged before migration 0033, or by the previous release
    // during a rolling deploy): null, not a guess.
    await db('webhook_attempts').where({ id: before.body.id }).update({ url: null });
    const unrecorded = await call('GET', `/webhooks/${created.body.id}/deliveries`, { cookie: member.cookie });
    expect(unrecorded.body.data.at(-1)).toMatchObject({ id: before.body.id, outcome: 'succeeded', url: null });
  });

  it('limits Send test and Resend together to 30 a minute for a workspace, with Retry-After, and sends nothing beyond', async () => {
    const db = database.current.db;
    const { admin, workspace } = await team(db, call, 'Busy sender');
    const created = await call('POST', '/webhooks', {
      cookie: admin.cookie,
      body: { name: 'Hammered', url: receiver.url('/hammered') },
    });
    receiver.route('/hammered', { secret: created.body.secret, behaviour: { kind: 'status', status: 200 } });
    const delivery = await failedDelivery(workspace.id, created.body.id, 1);

    const resend = () => call('POST', `/deliveries/${delivery.id}/resend`, { cookie: admin.cookie });
    const sendTest = () => call('POST', `/webhooks/${created.body.id}/test`, { cookie: admin.cookie });
    for (let sent = 0; sent < 30; sent += 1) expect((await (sent % 2 ? resend() : sendTest())).status).toBe(200);
    await receiver.waitForRequests('/hammered', 30);

    for (const refused of [await sendTest(), await resend()]) {
      expect(refused.status).toBe(429);
      expect(refused.body.error.type).toBe('rate_limit_exceeded');
      expect(refused.body.error.message).toMatch(/at most 30 a minute/);
      const retryAfter = Number(refused.headers.get('retry-after'));
      expect(retryAfter).toBeGreaterThan(0);
      expect(retryAfter).toBeLessThanOrEqual(60);
    }
    expect(receiver.requestsTo('/hammered')).toHaveLength(30);

    // Another workspace's window is its own.
    const other = await team(db, call, 'Quiet sender');
    const otherEndpoint = await call('POST', '/webhooks', {
      cookie: other.admin.cookie,
      body: { name: 'Quiet', url: receiver.url('/quiet') },
    });
    receiver.route('/quiet', { secret: otherEndpoint.body.secret, behaviour: { kind: 'status', status: 200 } });
    expect((await call('POST', `/webhooks/${otherEndpoint.body.id}/test`, { cookie: other.admin.cookie })).status).toBe(
      200,
    );
  });
});

describe('Roll secret while an earlier roll is still in its overlap', () => {
  /** Send test over HTTPS, and which of `secrets` verify the request the receiver got. */
  async function sendTestVerifiedBy(cookie: string, id: string, path: string, secrets: Record<string, string>) {
    const before = receiver.requestsTo(path).length;
    expect((await call('POST', `/webhooks/${id}/test`, { cookie })).body.outcome).toBe('succeeded');
    const request = (await receiver.waitForRequests(path, before + 1))[before]!;
    const header = request.headers['x-service-signature'] as string;
    return Object.entries(secrets)
      .filter(([, secret]) => {
        try {
          verifyWebhook(request.rawBody, header, secret);
          return true;
        } catch {
          return false;
        }
      })
      .map(([name]) => name);
  }

  it('is refused (409 saying until when), keeping the promised secret; end_overlap stops it on purpose', async () => {
    const { admin } = await team(database.current.db, call, 'Second roll');
    const created = await call('POST', '/webhooks', {
      cookie: admin.cookie,
      body: { name: 'Rolled twice', url: receiver.url('/rolled-twice') },
    });
    const id = created.body.id as string;
    receiver.route('/rolled-twice', { secret: created.body.secret, behaviour: { kind: 'status', status: 200 } });

    const first = await call('POST', `/webhooks/${id}/roll-secret`, {
      cookie: admin.cookie,
      body: { overlap_seconds: 3600 },
    });
    expect(first.status).toBe(200);
    const promised = first.body.previous_secret_expires_at as string;
    expect(first.body.accepted_secrets).toEqual([
      { which: 'new', until: null },
      { which: 'replaced', until: promised },
    ]);
    expect((await call('GET', `/webhooks/${id}`, { cookie: admin.cookie })).body.previous_secret_expires_at).toBe(
      promised,
    );

    // Ten minutes later in the integrator's walk; any time before the promised expiry here.
    for (const body of [{ overlap_seconds: 3600 }, {}]) {
      const refused = await call('POST', `/webhooks/${id}/roll-secret`, { cookie: admin.cookie, body });
      expect(refused.status).toBe(409);
      expect(refused.body.error.type).toBe('conflict');
      expect(refused.body.error.message).toContain(`still accepted until ${promised}`);
      expect(refused.body.error.message).toContain('end_overlap');
      expect(refused.body.error.message).toContain('--end-overlap');
    }
    const secrets = { original: created.body.secret as string, first: first.body.secret as string };
    // The receiver that has not switched yet still verifies, as promised; so does the new secret.
    expect(await sendTestVerifiedBy(admin.cookie, id, '/rolled-twice', secrets)).toEqual(['original', 'first']);

    const badFlag = await call('POST', `/webhooks/${id}/roll-secret`, {
      cookie: admin.cookie,
      body: { end_overlap: 'yes' },
    });
    expect(badFlag.status).toBe(400);
    expect(badFlag.body.error).toMatchObject({ type: 'invalid_param', param: 'end_overlap' });

    // Ending the overlap on purpose: the original stops now, the first rolled becomes the previous.
    const second = await call('POST', `/webhooks/${id}/roll-secret`, {
      cookie: admin.cookie,
      body: { overlap_seconds: 600, end_overlap: true },
    });
    expect(second.status).toBe(200);
    expect(second.body.accepted_secrets).toEqual([
      { which: 'new', until: null },
      { which: 'replaced', until: second.body.previous_secret_expires_at },
    ]);
    receiver.route('/rolled-twice', { secret: second.body.secret, behaviour: { kind: 'status', status: 200 } });
    expect(
      await sendTestVerifiedBy(admin.cookie, id, '/rolled-twice', { ...secrets, second: second.body.secret }),
    ).toEqual(['first', 'second']);
    const logged = await database.current
      .db('security_events')
      .where({ target_id: id, action: 'webhook.secret_rolled' })
      .orderBy('created_at', 'desc')
      .first();
    expect(logged.details).toEqual({ overlap_seconds: 600, ended_overlap_until: promised });
  });
});
