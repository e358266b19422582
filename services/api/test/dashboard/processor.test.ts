import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  FakeStripe,
  newApiKey,
  newWebhookSecret,
  postToConnection,
  stripeCustomer,
  stripeEvent,
} from '../../../worker/test/processor/stripe-kit.js';
import { HANDLED_EVENT_TYPES } from '@retention/processors';
import { eventually } from '@retention/testkit';
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
      // What to select on the Stripe endpoint: exactly the types the adapter applies.
      stripe_event_types: [...HANDLED_EVENT_TYPES],
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

  it('refuses a secret key (sk_) before asking Stripe anything: only a restricted key is taken', async () => {
    const { owner } = await team(api.current.db, call, 'Secret-key shop');
    const asked = stripe.requests.length;
    const secretKey = `sk_live_${'a1B2'.repeat(8)}`;
    const refused = await call('POST', '/processor/connect', {
      cookie: owner.cookie,
      body: { webhook_secret: newWebhookSecret(), api_key: secretKey },
    });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatchObject({ type: 'invalid_param', param: 'api_key' });
    expect(refused.body.error.message).toContain('restricted key');
    expect(refused.text).not.toContain(secretKey);
    expect(stripe.requests.length).toBe(asked);
    expect((await call('GET', '/processor', { cookie: owner.cookie })).body.status).toBe('not_connected');
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
      param: 'api_key',
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

  it('keeps the stored key when connecting again with the key field empty; a key given replaces it', async () => {
    const { owner, workspace } = await team(api.current.db, call, 'Key-keeping shop');
    const keyed = await call('POST', '/processor/connect', {
      cookie: owner.cookie,
      body: { webhook_secret: newWebhookSecret(), api_key: apiKey },
    });
    expect(keyed.body).toMatchObject({ status: 'connected', api_key_last4: apiKey.slice(-4) });
    const row = () => api.current.db('processor_connections').where({ workspace_id: workspace.id }).first();
    // The backfill the key queued has finished; keeping the key must not queue another.
    await api.current
      .db('processor_connections')
      .where({ workspace_id: workspace.id })
      .update({ backfill_status: 'succeeded' });
    const before = await row();

    // An owner rotating only the signing secret: the form sends the empty key field.
    const rolled = newWebhookSecret();
    const kept = await call('POST', '/processor/connect', {
      cookie: owner.cookie,
      body: { webhook_secret: rolled, api_key: '' },
    });
    expect(kept.status).toBe(200);
    expect(kept.body).toMatchObject({
      status: 'connected',
      connected_at: keyed.body.connected_at,
      webhook_secret_last4: rolled.slice(-4),
      api_key_last4: apiKey.slice(-4),
      backfill: { status: 'succeeded' },
    });
    const after = await row();
    expect(after.api_key_sealed).toBe(before.api_key_sealed);
    expect(after.webhook_secret_sealed).not.toBe(before.webhook_secret_sealed);
    const log = await api.current
      .db('security_events')
      .where({ workspace_id: workspace.id, action: 'processor.connected' })
      .orderBy('created_at', 'desc')
      .first();
    expect(log.details).toMatchObject({ api_key: 'kept', api_key_last4: apiKey.slice(-4) });
    // A rotation is on record with both signing secrets' last four: the one replaced, and the new one.
    expect(log.details).toMatchObject({
      previous_webhook_secret_last4: before.webhook_secret_last4,
      webhook_secret_last4: rolled.slice(-4),
    });

    // A new key replaces it (tried first, then a backfill is queued).
    const other = newApiKey();
    stripe.override = (request, url) =>
      request.headers.authorization === `Bearer ${other}`
        ? { status: 200, body: { object: 'list', data: [], has_more: false, url: url.pathname } }
        : null;
    try {
      const replaced = await call('POST', '/processor/connect', {
        cookie: owner.cookie,
        body: { webhook_secret: rolled, api_key: other },
      });
      expect(replaced.body).toMatchObject({
        status: 'connected',
        api_key_last4: other.slice(-4),
        backfill: { status: 'queued' },
      });
      expect((await row()).api_key_sealed).not.toBe(before.api_key_sealed);
    } finally {
      stripe.override = null;
    }
  });

  it('tries a kept key again on a disconnected connection: answered, connected; refused, nothing is saved', async () => {
    const { owner } = await team(api.current.db, call, 'Returning shop');
    await call('POST', '/processor/connect', {
      cookie: owner.cookie,
      body: { webhook_secret: newWebhookSecret(), api_key: apiKey },
    });
    await call('POST', '/processor/disconnect', { cookie: owner.cookie });
    const tried = stripe.requests.length;
    const back = await call('POST', '/processor/connect', {
      cookie: owner.cookie,
      body: { webhook_secret: newWebhookSecret() },
    });
    expect(back.body).toMatchObject({
      status: 'connected',
      api_key_last4: apiKey.slice(-4),
      disconnected_reason: null,
    });
    expect(
      stripe.requests
        .slice(tried)
        .some((request) => request.path === '/v1/customers' && request.authorization === `Bearer ${apiKey}`),
    ).toBe(true);

    await call('POST', '/processor/disconnect', { cookie: owner.cookie });
    const secretBefore = (await call('GET', '/processor', { cookie: owner.cookie })).body.webhook_secret_last4;
    stripe.override = (_request, url) =>
      url.pathname === '/v1/customers'
        ? { status: 401, body: { error: { type: 'invalid_request_error', message: 'Invalid API Key provided' } } }
        : null;
    try {
      const refused = await call('POST', '/processor/connect', {
        cookie: owner.cookie,
        body: { webhook_secret: newWebhookSecret() },
      });
      expect(refused.status).toBe(400);
      expect(refused.body.error).toEqual({
        type: 'invalid_param',
        message:
          'api_key: Stripe refused the stored key (401); nothing was saved: give a new key, or remove the stored one',
        param: 'api_key',
      });
    } finally {
      stripe.override = null;
    }
    expect((await call('GET', '/processor', { cookie: owner.cookie })).body).toMatchObject({
      status: 'disconnected',
      webhook_secret_last4: secretBefore,
      api_key_last4: apiKey.slice(-4),
    });
  });

  it('removes the stored key on purpose (owner only, logged), and a forged or non-owner request changes nothing', async () => {
    const { owner, admin, member, workspace } = await team(api.current.db, call, 'Key-removing shop');
    await call('POST', '/processor/connect', {
      cookie: owner.cookie,
      body: { webhook_secret: newWebhookSecret(), api_key: apiKey },
    });
    for (const cookie of [admin.cookie, member.cookie]) {
      const refused = await call('POST', '/processor/remove-key', { cookie, body: {} });
      expect(refused.status).toBe(403);
      expect(refused.body.error.type).toBe('forbidden');
    }
    const forged = await call('POST', '/processor/remove-key', {
      cookie: owner.cookie,
      origin: 'https://evil.example',
      body: {},
    });
    expect(forged.status).toBe(403);
    const noOrigin = await call('POST', '/processor/remove-key', { cookie: owner.cookie, origin: null, body: {} });
    expect(noOrigin.status).toBe(403);
    expect((await call('GET', '/processor', { cookie: owner.cookie })).body.api_key_last4).toBe(apiKey.slice(-4));
    const removals = () =>
      api.current.db('security_events').where({ workspace_id: workspace.id, action: 'processor.key_removed' });
    expect(await removals()).toHaveLength(0);

    const removed = await call('POST', '/processor/remove-key', { cookie: owner.cookie, body: {} });
    expect(removed.status).toBe(200);
    expect(removed.body).toMatchObject({
      status: 'connected',
      api_key_last4: null,
      backfill: { status: 'failed', error: 'API key removed' },
    });
    const row = await api.current.db('processor_connections').where({ workspace_id: workspace.id }).first();
    expect(row.api_key_sealed).toBeNull();
    const [entry] = await removals();
    expect(entry).toMatchObject({
      actor_type: 'user',
      actor_user_id: owner.id,
      details: { provider: 'stripe', api_key_last4: apiKey.slice(-4) },
    });
    expect(JSON.stringify(entry)).not.toContain(apiKey);

    const again = await call('POST', '/processor/remove-key', { cookie: owner.cookie, body: {} });
    expect(again.status).toBe(409);
    expect((await call('POST', '/processor/sync', { cookie: owner.cookie })).status).toBe(409);
    // Connecting again without a key now connects without one.
    const keyless = await call('POST', '/processor/connect', {
      cookie: owner.cookie,
      body: { webhook_secret: newWebhookSecret() },
    });
    expect(keyless.body).toMatchObject({ status: 'connected', api_key_last4: null });
  });

  it('refuses a restricted key without a read permission the service needs, naming it and how to give it', async () => {
    const { owner, workspace } = await team(api.current.db, call, 'Half-permitted shop');
    const refusedPaths = new Set(['/v1/payment_intents', '/v1/invoice_payments']);
    stripe.override = (_request, url) =>
      refusedPaths.has(url.pathname)
        ? {
            status: 403,
            body: {
              error: {
                type: 'invalid_request_error',
                message: `The provided key 'rk_test_*********${apiKey.slice(-4)}' does not have the required permissions for this endpoint.`,
              },
            },
          }
        : null;
    try {
      const refused = await call('POST', '/processor/connect', {
        cookie: owner.cookie,
        body: { webhook_secret: newWebhookSecret(), api_key: apiKey },
      });
      expect(refused.status).toBe(400);
      expect(refused.body.error).toEqual({
        type: 'invalid_param',
        param: 'api_key',
        message:
          'api_key: The key has no read access to Invoice payments, Payment intents, so nothing was saved. ' +
          'In Stripe, open Developers, API keys, edit the restricted key and set each of these to Read (the service ' +
          'reads customers, subscriptions, invoices, invoice payments, payment intents and events), then connect again',
      });
      expect(refused.body.error.message).not.toMatch(/try again in a few minutes/);
      // Each permission was asked for with one item of its list.
      const asked = stripe.requests.filter((request) => refusedPaths.has(request.path)).slice(-2);
      expect(asked.map((request) => request.query.get('limit'))).toEqual(['1', '1']);

      refusedPaths.clear();
      refusedPaths.add('/v1/customers');
      const noCustomers = await call('POST', '/processor/connect', {
        cookie: owner.cookie,
        body: { webhook_secret: newWebhookSecret(), api_key: apiKey },
      });
      expect(noCustomers.body.error.message).toMatch(
        /^api_key: The key has no read access to Customers, so nothing was saved\. .* set it to Read /,
      );
      expect(await api.current.db('processor_connections').where({ workspace_id: workspace.id })).toHaveLength(0);
    } finally {
      stripe.override = null;
    }
  });

  it('Import again: refused in words while one runs; after a failure it goes on from its cursor, after a finished run it starts afresh', async () => {
    const { owner, workspace } = await team(api.current.db, call, 'Importing shop');
    await call('POST', '/processor/connect', {
      cookie: owner.cookie,
      body: { webhook_secret: newWebhookSecret(), api_key: apiKey },
    });
    const connection = () => api.current.db('processor_connections').where({ workspace_id: workspace.id });
    const queued = await call('POST', '/processor/sync', { cookie: owner.cookie });
    expect(queued.status).toBe(409);
    expect(queued.body.error).toEqual({
      type: 'conflict',
      message: 'An import is already queued and starts in a moment; there is no need to start another',
    });
    await connection().update({ backfill_status: 'running', backfill_phase: 'customers', backfill_cursor: 'cus_1' });
    const running = await call('POST', '/processor/sync', { cookie: owner.cookie });
    expect(running.body.error.message).toBe(
      'An import is already running; it goes on by itself, so wait for it to finish rather than start another',
    );
    expect(running.text).not.toContain(workspace.id);

    // A run that failed part-way (here: Stripe refused a page) keeps its place.
    const counts = { customers: 2700, subscriptions: 0, invoices: 0 };
    await connection().update({
      backfill_status: 'failed',
      backfill_error: 'Too many requests',
      backfill_cursor: 'cus_2700',
      backfill_counts: JSON.stringify(counts),
    });
    expect((await call('GET', '/processor', { cookie: owner.cookie })).body.backfill).toMatchObject({
      status: 'failed',
      resumable: true,
      waiting_until: null,
    });
    const resumed = await call('POST', '/processor/sync', { cookie: owner.cookie });
    expect(resumed.status).toBe(200);
    expect(resumed.body.backfill).toMatchObject({ status: 'queued', phase: 'customers', counts, error: null });
    expect(await connection().first()).toMatchObject({ backfill_cursor: 'cus_2700' });

    // A finished run: a new one from the first customer.
    await connection().update({ backfill_status: 'succeeded', backfill_cursor: null, backfill_error: null });
    const fresh = await call('POST', '/processor/sync', { cookie: owner.cookie });
    expect(fresh.body.backfill).toMatchObject({
      status: 'queued',
      phase: null,
      counts: { customers: 0, subscriptions: 0, invoices: 0 },
    });
  });

  it('goes on with an import its disconnect interrupted once connected again with the key kept', async () => {
    const { owner, workspace } = await team(api.current.db, call, 'Reconnecting shop');
    await call('POST', '/processor/connect', {
      cookie: owner.cookie,
      body: { webhook_secret: newWebhookSecret(), api_key: apiKey },
    });
    const counts = { customers: 3000, subscriptions: 1232, invoices: 0 };
    const connection = () => api.current.db('processor_connections').where({ workspace_id: workspace.id });
    await connection().update({
      backfill_status: 'running',
      backfill_phase: 'subscriptions',
      backfill_cursor: 'sub_1232',
      backfill_counts: JSON.stringify(counts),
    });
    const disconnected = await call('POST', '/processor/disconnect', { cookie: owner.cookie });
    expect(disconnected.body.backfill).toMatchObject({ status: 'failed', error: 'disconnected', resumable: true });

    const again = await call('POST', '/processor/connect', {
      cookie: owner.cookie,
      body: { webhook_secret: newWebhookSecret() },
    });
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({
      status: 'connected',
      backfill: { status: 'queued', phase: 'subscriptions', counts, error: null },
    });
    expect(await connection().first()).toMatchObject({ backfill_cursor: 'sub_1232' });
  });

  it('retries parked events for the owner (logged), and shows the latest error in words', async () => {
    const { owner, admin, workspace } = await team(api.current.db, call, 'Parked shop');
    const secret = newWebhookSecret();
    await call('POST', '/processor/connect', { cookie: owner.cookie, body: { webhook_secret: secret } });
    const path = new URL((await call('GET', '/processor', { cookie: owner.cookie })).body.webhook_url).pathname;
    const event = stripeEvent('customer.created', stripeCustomer());
    await postToConnection(`${api.current.url}${path}`, event, secret);
    // No worker runs here: the event is made to look as its last failed attempt left it.
    const error =
      'The event is malformed: the Stripe id "cus_\\u0000" holds a control character, which no Stripe id does.';
    await api.current
      .db('processor_events')
      .where({ workspace_id: workspace.id, psp_event_id: event.id })
      .update({ state: 'parked', attempts: 1, last_error: error });
    expect((await call('GET', '/processor', { cookie: owner.cookie })).body).toMatchObject({
      events_parked: 1,
      latest_event_error: { psp_event_id: event.id, type: 'customer.created', state: 'parked', attempts: 1, error },
    });

    expect((await call('POST', '/processor/retry', { cookie: admin.cookie, body: {} })).status).toBe(403);
    const forged = await call('POST', '/processor/retry', {
      cookie: owner.cookie,
      origin: 'https://evil.example',
      body: {},
    });
    expect(forged.status).toBe(403);
    const bad = await call('POST', '/processor/retry', { cookie: owner.cookie, body: { event_id: 'evt bad' } });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({ type: 'invalid_param', param: 'event_id' });
    const retried = await call('POST', '/processor/retry', { cookie: owner.cookie, body: { event_id: event.id } });
    expect(retried.status).toBe(200);
    expect(retried.body).toMatchObject({
      retried: [event.id],
      events_parked: 0,
      events_pending: 1,
      latest_event_error: { state: 'waiting', attempts: 0 },
    });
    const again = await call('POST', '/processor/retry', { cookie: owner.cookie, body: {} });
    expect(again.status).toBe(409);
    expect(again.body.error.message).toBe('No event is parked, so there is nothing to retry');
    const log = await api.current
      .db('security_events')
      .where({ workspace_id: workspace.id, action: 'processor.events_retried' });
    expect(log).toHaveLength(1);
    expect(log[0]).toMatchObject({
      actor_type: 'user',
      actor_user_id: owner.id,
      details: { provider: 'stripe', count: 1, event_ids: [event.id] },
    });
  });

  it('says what is wrong with a signing secret that is not one: its beginning, its characters, its length', async () => {
    const { owner, workspace } = await team(api.current.db, call, 'Pasting shop');
    const shape = "Stripe's signing secrets are whsec_ followed by 16 to 200 letters and digits";
    const cases: Array<[string, string]> = [
      ['abc', "must be the endpoint's signing secret from Stripe, beginning whsec_"],
      ['whsec_abc', `is too short: ${shape}; copy the whole secret from the endpoint's page in Stripe`],
      [`whsec_${'a'.repeat(201)}`, `is too long: ${shape}; copy only the secret from the endpoint's page in Stripe`],
      [`whsec_${'a'.repeat(31)} `, `has characters a signing secret never has: ${shape}; copy it again from Stripe`],
    ];
    for (const [secret, reason] of cases) {
      const refused = await call('POST', '/processor/connect', {
        cookie: owner.cookie,
        body: { webhook_secret: secret },
      });
      expect(refused.status).toBe(400);
      expect(refused.body.error).toEqual({
        type: 'invalid_param',
        message: `webhook_secret: ${reason}`,
        param: 'webhook_secret',
      });
    }
    expect(await api.current.db('processor_connections').where({ workspace_id: workspace.id })).toHaveLength(0);
  });

  it('says what is wrong with an API key that is not a restricted key: its kind, its characters, its length', async () => {
    const { owner, workspace } = await team(api.current.db, call, 'Key pasting shop');
    const asked = stripe.requests.length;
    const shape = "Stripe's restricted keys are rk_live_ or rk_test_ followed by 16 to 250 letters and digits";
    const reads = 'customers, subscriptions, invoices, invoice payments, payment intents and events';
    const wanted = `this field takes a restricted key (rk_live_… or rk_test_…) with read access to ${reads}`;
    const cases: Array<[string, string]> = [
      // A new user's test key, cut short: it does begin rk_test_, so that is not what is wrong.
      ['rk_test_bogus123', `is too short: ${shape}; copy the whole key from Stripe (Developers, API keys)`],
      [`rk_live_${'a'.repeat(251)}`, `is too long: ${shape}; copy only the key from Stripe (Developers, API keys)`],
      [`rk_test_${'a'.repeat(20)}-x`, `has characters a restricted key never has: ${shape}; copy it again from Stripe`],
      [`pk_test_${'a'.repeat(24)}`, `is a publishable key (pk_…), which cannot read your Stripe data: ${wanted}`],
      [
        `whsec_${'a'.repeat(24)}`,
        `is a webhook signing secret (whsec_…), which goes in the signing secret field: ${wanted}`,
      ],
      ['abc', `must be a Stripe restricted key (rk_live_… or rk_test_…) with read access to ${reads}`],
    ];
    for (const [key, reason] of cases) {
      const refused = await call('POST', '/processor/connect', {
        cookie: owner.cookie,
        body: { webhook_secret: newWebhookSecret(), api_key: key },
      });
      expect(refused.status).toBe(400);
      expect(refused.body.error).toEqual({ type: 'invalid_param', message: `api_key: ${reason}`, param: 'api_key' });
      expect(refused.text).not.toContain(key);
    }
    // A signing-secret field given a key is told it is a key, not that it must begin whsec_.
    const swapped = await call('POST', '/processor/connect', {
      cookie: owner.cookie,
      body: { webhook_secret: newApiKey() },
    });
    expect(swapped.body.error).toEqual({
      type: 'invalid_param',
      message:
        "webhook_secret: is an API key, not a signing secret: Stripe's signing secrets are whsec_ followed by 16 to 200 " +
        "letters and digits, shown on the endpoint's page in Stripe (Developers, Webhooks, then the endpoint)",
      param: 'webhook_secret',
    });
    // Refused before anything is asked of Stripe, and nothing saved.
    expect(stripe.requests.length).toBe(asked);
    expect(await api.current.db('processor_connections').where({ workspace_id: workspace.id })).toHaveLength(0);
  });

  it('counts deliveries refused for a bad signature, storing none of them, and says the secret is wrong', async () => {
    const { owner } = await team(api.current.db, call, 'Mistyped shop');
    const right = newWebhookSecret();
    const first = await call('POST', '/processor/connect', { cookie: owner.cookie, body: { webhook_secret: right } });
    const url = `${api.current.url}${new URL(first.body.webhook_url as string).pathname}`;
    expect((await postToConnection(url, stripeEvent('customer.created', stripeCustomer()), right)).status).toBe(200);
    expect((await call('GET', '/processor', { cookie: owner.cookie })).body).toMatchObject({
      status: 'connected',
      deliveries_refused: null,
    });

    // Connect again with a mistyped secret: Stripe keeps signing with the right one.
    const mistyped = newWebhookSecret();
    await call('POST', '/processor/connect', { cookie: owner.cookie, body: { webhook_secret: mistyped } });
    // The receiver keeps a connection's secret for up to a second (connection-cache.ts).
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    const eventIds: string[] = [];
    for (let i = 0; i < 3; i++) {
      const event = stripeEvent('customer.created', stripeCustomer());
      eventIds.push(event.id);
      expect((await postToConnection(url, event, right)).status).toBe(400);
    }
    // Not Stripe's doing, so not counted: no signature at all, and a body that is not an event.
    expect((await postToConnection(url, {}, mistyped, { signature: '' })).status).toBe(400);
    expect((await postToConnection(url, { object: 'not an event' }, mistyped)).status).toBe(400);

    // Counted after their answers (best effort): read once the count is written.
    const view = await eventually(async () => {
      const body = (await call('GET', '/processor', { cookie: owner.cookie })).body;
      return body.deliveries_refused?.count === 3 ? body : null;
    });
    expect(view.status).toBe('connected');
    expect(view.deliveries_refused).toEqual({
      count: 3,
      since: expect.any(String),
      last_at: expect.any(String),
      none_accepted_since: true,
      message: expect.stringMatching(
        /^3 deliveries refused for a bad signature since \S+, the last at \S+: check the signing secret$/,
      ),
    });
    expect(Date.parse(view.deliveries_refused.last_at)).toBeGreaterThanOrEqual(
      Date.parse(view.deliveries_refused.since),
    );
    // Nothing of the refused deliveries is stored: no event, and the count row holds no body or signature.
    const connectionId = first.body.webhook_url.split('/').at(-1);
    expect(await api.current.db('processor_events').where({ connection_id: connectionId })).toHaveLength(1);
    const counted = await api.current.db('processor_refused_deliveries').where({ connection_id: connectionId });
    expect(Object.keys(counted[0]).sort()).toEqual(['connection_id', 'first_at', 'last_at', 'refused']);
    expect(JSON.stringify(counted)).not.toMatch(new RegExp(eventIds.join('|')));

    // A delivery accepted after them: still counted, but no longer all refused.
    expect((await postToConnection(url, stripeEvent('customer.created', stripeCustomer()), mistyped)).status).toBe(200);
    expect((await call('GET', '/processor', { cookie: owner.cookie })).body.deliveries_refused).toMatchObject({
      count: 3,
      none_accepted_since: false,
    });
    // The secret set again: the count starts over.
    await call('POST', '/processor/connect', { cookie: owner.cookie, body: { webhook_secret: right } });
    expect((await call('GET', '/processor', { cookie: owner.cookie })).body.deliveries_refused).toBeNull();
  });

  it('changes only the key with no signing secret given (the stored one kept); none stored is refused in words', async () => {
    const { owner, workspace } = await team(api.current.db, call, 'Key-only shop');
    const refused = await call('POST', '/processor/connect', { cookie: owner.cookie, body: { api_key: apiKey } });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toEqual({
      type: 'invalid_param',
      param: 'webhook_secret',
      message:
        'webhook_secret: is required to connect: paste the signing secret of the endpoint you created in Stripe for the webhook URL',
    });
    const secret = newWebhookSecret();
    await call('POST', '/processor/connect', { cookie: owner.cookie, body: { webhook_secret: secret } });
    const row = () => api.current.db('processor_connections').where({ workspace_id: workspace.id }).first();
    const before = await row();
    const keyed = await call('POST', '/processor/connect', {
      cookie: owner.cookie,
      body: { webhook_secret: '', api_key: apiKey },
    });
    expect(keyed.status).toBe(200);
    expect(keyed.body).toMatchObject({
      status: 'connected',
      webhook_secret_last4: secret.slice(-4),
      api_key_last4: apiKey.slice(-4),
    });
    expect((await row()).webhook_secret_last4).toBe(before.webhook_secret_last4);
    // The secret kept is the same secret: Stripe's events signed with it are still taken.
    const url = `${api.current.url}${new URL(keyed.body.webhook_url as string).pathname}`;
    expect((await postToConnection(url, stripeEvent('customer.created', stripeCustomer()), secret)).status).toBe(200);
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
