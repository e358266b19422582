import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  FakeStripe,
  newApiKey,
  newWebhookSecret,
  postToConnection,
  stripeCustomer,
  stripeEvent,
} from '../../../worker/test/processor/stripe-kit.js';
import { useApi } from '../harness.js';
import { dashboardClient, team } from './support.js';

/**
 * Settings, Processor over HTTP: owner only, through the same functions as the CLI. The URL to
 * register in Stripe is known before connecting (Stripe makes the signing secret only once that
 * endpoint exists), and stays the connection's URL afterwards.
 */
let stripe: FakeStripe;
const apiKey = newApiKey();
beforeAll(async () => {
  stripe = await FakeStripe.start(apiKey);
});
afterAll(() => stripe.close());

const api = useApi({ env: () => ({ STRIPE_API_BASE: stripe.url }) });
const call = (...args: Parameters<ReturnType<typeof dashboardClient>>) => dashboardClient(api.current.url)(...args);

describe('Settings, Processor', () => {
  it('shows the webhook URL before connecting, then connects with the secret Stripe made for it', async () => {
    const { owner, workspace } = await team(api.current.db, call, 'Stripe shop');
    const before = await call('GET', '/processor', { cookie: owner.cookie });
    expect(before.status).toBe(200);
    expect(before.body).toEqual({
      status: 'not_connected',
      provider: null,
      webhook_url: expect.stringMatching(/^http:\/\/localhost:3000\/processor\/stripe\/[0-9a-f-]{36}$/),
    });
    expect((await call('GET', '/processor', { cookie: owner.cookie })).body.webhook_url).toBe(before.body.webhook_url);

    const secret = newWebhookSecret();
    const connected = await call('POST', '/processor/connect', {
      cookie: owner.cookie,
      body: { webhook_secret: secret },
    });
    expect(connected.status).toBe(200);
    expect(connected.body).toMatchObject({
      provider: 'stripe',
      status: 'pending',
      webhook_url: before.body.webhook_url,
      webhook_secret_last4: secret.slice(-4),
      api_key_last4: null,
    });
    expect(connected.text).not.toContain(secret);

    // Stripe posts to the URL the page showed before the connection existed.
    const path = new URL(before.body.webhook_url as string).pathname;
    const event = stripeEvent('customer.created', stripeCustomer());
    const received = await postToConnection(`${api.current.url}${path}`, event, secret);
    expect(received.status).toBe(200);
    const after = await call('GET', '/processor', { cookie: owner.cookie });
    expect(after.body).toMatchObject({ status: 'connected', events_received: 1 });

    const log = await api.current
      .db('security_events')
      .where({ workspace_id: workspace.id, action: 'processor.connected' })
      .orderBy('created_at');
    expect(log[0]).toMatchObject({ actor_type: 'user', actor_user_id: owner.id });
    expect(JSON.stringify(log)).not.toContain(secret);
  });

  it('tries the key first: refused by Stripe, nothing is saved; accepted, it is connected and a backfill is queued', async () => {
    const { owner } = await team(api.current.db, call, 'Keyed shop');
    const refused = await call('POST', '/processor/connect', {
      cookie: owner.cookie,
      body: { webhook_secret: newWebhookSecret(), api_key: newApiKey() },
    });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toEqual({
      type: 'invalid_param',
      message: 'api_key: Stripe refused the key (401); nothing was saved',
    });
    expect((await call('GET', '/processor', { cookie: owner.cookie })).body.status).toBe('not_connected');

    const accepted = await call('POST', '/processor/connect', {
      cookie: owner.cookie,
      body: { webhook_secret: newWebhookSecret(), api_key: apiKey },
    });
    expect(accepted.status).toBe(200);
    expect(accepted.body).toMatchObject({ status: 'connected', api_key_last4: apiKey.slice(-4) });
    expect(accepted.body.backfill.status).toBe('queued');
    expect(accepted.text).not.toContain(apiKey);
    const again = await call('POST', '/processor/sync', { cookie: owner.cookie });
    expect(again.status).toBe(409);

    const disconnected = await call('POST', '/processor/disconnect', { cookie: owner.cookie });
    expect(disconnected.status).toBe(200);
    expect(disconnected.body.status).toBe('disconnected');
  });

  it('connects again as the CLI does: a working connection stays connected, with a new secret or a new key', async () => {
    const { owner } = await team(api.current.db, call, 'Rolling shop');
    const first = newWebhookSecret();
    await call('POST', '/processor/connect', { cookie: owner.cookie, body: { webhook_secret: first } });
    const path = new URL((await call('GET', '/processor', { cookie: owner.cookie })).body.webhook_url).pathname;
    await postToConnection(`${api.current.url}${path}`, stripeEvent('customer.created', stripeCustomer()), first);
    const working = (await call('GET', '/processor', { cookie: owner.cookie })).body;
    expect(working).toMatchObject({ status: 'connected', connected_at: expect.any(String) });

    for (const body of [
      { webhook_secret: first },
      { webhook_secret: newWebhookSecret() },
      { webhook_secret: newWebhookSecret(), api_key: '' }, // the form's empty key field: no key
    ]) {
      const again = await call('POST', '/processor/connect', { cookie: owner.cookie, body });
      expect(again.status).toBe(200);
      expect(again.body).toMatchObject({
        status: 'connected',
        connected_at: working.connected_at,
        webhook_secret_last4: body.webhook_secret.slice(-4),
      });
      expect((await call('GET', '/me', { cookie: owner.cookie })).body.workspace.processor_status).toBe('connected');
    }
    const refused = await call('POST', '/processor/connect', {
      cookie: owner.cookie,
      body: { webhook_secret: newWebhookSecret(), api_key: newApiKey() },
    });
    expect(refused.status).toBe(400);
    expect((await call('GET', '/processor', { cookie: owner.cookie })).body).toMatchObject({
      status: 'connected',
      api_key_last4: null,
    });
    const keyed = await call('POST', '/processor/connect', {
      cookie: owner.cookie,
      body: { webhook_secret: newWebhookSecret(), api_key: apiKey },
    });
    expect(keyed.body).toMatchObject({ status: 'connected', api_key_last4: apiKey.slice(-4) });
  });

  it('is the owner’s alone, refuses cross-site requests and bad input, and changes nothing then', async () => {
    const { owner, admin, member, workspace } = await team(api.current.db, call, 'Guarded shop');
    for (const cookie of [admin.cookie, member.cookie]) {
      expect((await call('GET', '/processor', { cookie })).status).toBe(403);
      const refused = await call('POST', '/processor/connect', {
        cookie,
        body: { webhook_secret: newWebhookSecret() },
      });
      expect(refused.status).toBe(403);
      expect(refused.body.error.type).toBe('forbidden');
    }
    const forged = await call('POST', '/processor/connect', {
      cookie: owner.cookie,
      origin: 'https://evil.example',
      body: { webhook_secret: newWebhookSecret() },
    });
    expect(forged.status).toBe(403);
    for (const body of [{}, { webhook_secret: 'not-a-secret' }, { webhook_secret: newWebhookSecret(), extra: 1 }]) {
      expect((await call('POST', '/processor/connect', { cookie: owner.cookie, body })).status).toBe(400);
    }
    expect((await call('GET', '/processor')).status).toBe(401);
    expect(await api.current.db('processor_connections').where({ workspace_id: workspace.id })).toHaveLength(0);
  });
});
