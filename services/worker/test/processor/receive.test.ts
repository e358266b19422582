import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it, beforeAll, afterAll } from '@jest/globals';
import Stripe from 'stripe';
import { connectProcessor, createWorkspace, listSecurityEvents, OPERATOR, processorStatus } from '@retention/domain';
import { eventually, REPO_ROOT, runCli, testSecretsKey, useTestDatabase } from '@retention/testkit';
import { startApiInstance, type ApiInstance } from '../../../api/test/api-instance.js';
import {
  FakeStripe,
  newApiKey,
  newWebhookSecret,
  nowSeconds,
  postToConnection,
  stripeCustomer,
  stripeEvent,
} from './stripe-kit.js';

/**
 * Receiving Stripe's events: `POST /processor/stripe/:connection_id` verifies with the stripe
 * library over the raw bytes, refuses with 400 and the JSON error shape while storing nothing,
 * stores an accepted event once and answers at once. And the CLI that connects it.
 */

const database = useTestDatabase();
let api: ApiInstance;
const BASE_URL = 'https://retention.example';

beforeAll(async () => {
  api = await startApiInstance({ databaseUrl: database.current.url, baseUrl: BASE_URL });
});
afterAll(async () => {
  await api.close();
});

async function connectedWorkspace(options: { apiKey?: string } = {}) {
  const db = database.current.db;
  const workspace = await createWorkspace(db, { name: 'Acme', processor: 'disconnected' });
  const secret = newWebhookSecret();
  const connection = await connectProcessor(
    db,
    Buffer.from(testSecretsKey(), 'base64'),
    {
      workspace_id: workspace.id,
      provider: 'stripe',
      webhook_secret: secret,
      ...(options.apiKey && { api_key: options.apiKey }),
    },
    options.apiKey ? 'accepted' : 'none',
    OPERATOR,
  );
  return { workspace, secret, connection, url: `${api.url}/processor/stripe/${connection.id}` };
}

const storedCount = async (connectionId: string) =>
  Number(
    (await database.current.db('processor_events').where({ connection_id: connectionId }).count({ n: '*' }))[0]!.n,
  );

describe('POST /processor/stripe/:connection_id', () => {
  it('stores a correctly signed event once, answers 2xx at once, and a redelivery is 2xx and not stored again', async () => {
    const { url, secret, connection } = await connectedWorkspace();
    const event = stripeEvent('customer.created', stripeCustomer());
    const first = await postToConnection(url, event, secret);
    expect(first).toMatchObject({ status: 200, body: { received: true, duplicate: false } });
    expect(first.ms).toBeLessThan(500);
    const again = await postToConnection(url, event, secret);
    expect(again).toMatchObject({ status: 200, body: { received: true, duplicate: true } });
    expect(await storedCount(connection.id)).toBe(1);
    const row = await database.current.db('processor_events').where({ connection_id: connection.id }).first();
    expect(row).toMatchObject({ psp_event_id: event.id, type: 'customer.created', state: 'pending' });
    expect(row.payload).toEqual(event);
    expect(row.psp_created_at.getTime()).toBe(event.created * 1000);
  });

  it('stores the verified text as the same event whatever its layout: indentation, non-ASCII, a line separator', async () => {
    const { url, secret, connection } = await connectedWorkspace();
    await postToConnection(url, stripeEvent('customer.created', stripeCustomer()), secret); // connects it
    const event = stripeEvent('customer.created', { ...stripeCustomer(), name: 'Zoë Ñúñez 日本 \u2028 😀' });
    const body = `${JSON.stringify(event, null, 2)}\n`;
    const signature = Stripe.webhooks.generateTestHeaderString({ payload: body, secret });
    const reply = await postToConnection(url, event, secret, { body, signature });
    expect(reply).toMatchObject({ status: 200, body: { received: true, duplicate: false } });
    const row = await database.current.db('processor_events').where({ psp_event_id: event.id }).first();
    expect(row).toMatchObject({ connection_id: connection.id, type: 'customer.created' });
    expect(row.payload).toEqual(event);
  });

  it('stores a burst of concurrent deliveries exactly once each, redeliveries in the same burst included', async () => {
    const { url, secret, connection } = await connectedWorkspace();
    await postToConnection(url, stripeEvent('customer.created', stripeCustomer()), secret); // connects it
    const events = Array.from({ length: 60 }, () => stripeEvent('customer.created', stripeCustomer()));
    const burst = [...events, ...events.slice(0, 15)];
    const replies = await Promise.all(burst.map((event) => postToConnection(url, event, secret)));
    expect(replies.every((reply) => reply.status === 200)).toBe(true);
    expect(replies.filter((reply) => reply.body.duplicate === false)).toHaveLength(60);
    expect(replies.filter((reply) => reply.body.duplicate === true)).toHaveLength(15);
    expect(await storedCount(connection.id)).toBe(61);
  });

  it('marks a key-less connection connected on its first correctly signed event, and logs it', async () => {
    const { url, secret, connection, workspace } = await connectedWorkspace();
    expect(connection.status).toBe('pending');
    const db = database.current.db;
    expect((await db('workspaces').where({ id: workspace.id }).first()).processor_status).toBe('disconnected');
    expect((await postToConnection(url, stripeEvent('customer.created', stripeCustomer()), secret)).status).toBe(200);
    const after = await db('processor_connections').where({ id: connection.id }).first();
    expect(after).toMatchObject({ status: 'connected' });
    const status = await processorStatus(db, BASE_URL, workspace.id);
    expect(status).toMatchObject({ status: 'connected', events_received: 1, last_event_at: expect.any(String) });
    expect((await db('workspaces').where({ id: workspace.id }).first()).processor_status).toBe('connected');
    const log = await listSecurityEvents(db, workspace.id);
    expect(log.data.map((entry) => [entry.action, entry.actor.type])).toEqual([
      ['processor.connected', 'processor'],
      ['processor.connected', 'operator'],
    ]);
  });

  it.each([
    ['a wrong secret', (url: string, event: object) => postToConnection(url, event, newWebhookSecret()), true],
    [
      'a stale timestamp (301 s old)',
      (url: string, event: object, secret: string) =>
        postToConnection(url, event, secret, { timestamp: nowSeconds() - 301 }),
      true,
    ],
    [
      'a timestamp 301 s ahead',
      (url: string, event: object, secret: string) =>
        postToConnection(url, event, secret, { timestamp: nowSeconds() + 301 }),
      true,
    ],
    [
      'no signature',
      (url: string, event: object, secret: string) => postToConnection(url, event, secret, { signature: '' }),
      false,
    ],
    [
      'a garbled header',
      (url: string, event: object, secret: string) =>
        postToConnection(url, event, secret, { signature: 't=abc,v1=zz' }),
      true,
    ],
    [
      'a body changed after signing',
      (url: string, event: object, secret: string) =>
        postToConnection(url, event, secret, { body: JSON.stringify({ ...event, type: 'invoice.paid' }) }),
      true,
    ],
    [
      'a signed body that is not an event',
      async (url: string, _event: object, secret: string) =>
        postToConnection(url, { object: 'customer', id: 'cus_1' }, secret),
      false,
    ],
  ])('refuses %s with 400 and the JSON error shape, storing nothing', async (_case, send, counted) => {
    const { url, secret, connection, workspace } = await connectedWorkspace();
    const reply = await send(url, stripeEvent('customer.created', stripeCustomer()), secret);
    expect(reply.status).toBe(400);
    expect(reply.body).toEqual({ error: { type: 'invalid_param', message: expect.any(String) } });
    expect(await storedCount(connection.id)).toBe(0);
    // A bad or stale signature is counted (a count and its times: never the body nor the
    // signature); no signature at all, or a body that is not an event, is not Stripe's doing.
    // Counted after the answer (best effort), so looked for until it is written.
    const status = await eventually(async () => {
      const now = await processorStatus(database.current.db, BASE_URL, workspace.id);
      return !counted || now.deliveries_refused ? now : null;
    });
    expect(status.deliveries_refused?.count ?? 0).toBe(counted ? 1 : 0);
    expect((await database.current.db('processor_connections').where({ id: connection.id }).first()).status).toBe(
      'pending',
    );
  });

  it('refuses an unknown or malformed connection id with 400, and a non-JSON signed body', async () => {
    const { secret, url } = await connectedWorkspace();
    const event = stripeEvent('customer.created', stripeCustomer());
    for (const id of ['0b8e4a4e-0000-4000-8000-000000000000', 'not-a-uuid', "1' OR '1'='1"]) {
      const reply = await postToConnection(`${api.url}/processor/stripe/${encodeURIComponent(id)}`, event, secret);
      expect(reply).toMatchObject({ status: 400, body: { error: { type: 'invalid_param' } } });
    }
    const notJson = await postToConnection(url, event, secret, {
      body: 'not json',
      signature: (await import('./stripe-kit.js'))
        .signedDelivery({}, secret)
        .signature.replace(/v1=[0-9a-f]+/, 'v1=' + '0'.repeat(64)),
    });
    expect(notJson.status).toBe(400);
  });

  it('refuses a body over 1 MB with 413 before reading it all', async () => {
    const { url, secret, connection } = await connectedWorkspace();
    const event = stripeEvent('customer.created', stripeCustomer({ description: 'x'.repeat(1_100_000) }));
    const reply = await postToConnection(url, event, secret);
    expect(reply.status).toBe(413);
    expect(reply.body).toEqual({
      error: { type: 'payload_too_large', message: expect.stringContaining('larger than') },
    });
    expect(await storedCount(connection.id)).toBe(0);
  });

  it('refuses events once the owner disconnected; other methods on the path stay 404', async () => {
    const { url, secret, workspace } = await connectedWorkspace();
    const cli = await runCli(['processor', 'disconnect', '--workspace', workspace.id], {
      DATABASE_URL: database.current.url,
    });
    expect(cli.code).toBe(0);
    expect((await postToConnection(url, stripeEvent('customer.created', stripeCustomer()), secret)).status).toBe(400);
    expect((await fetch(url)).status).toBe(404);
  });

  it('never writes the signing secret to the log', async () => {
    const { url, secret } = await connectedWorkspace();
    await postToConnection(url, stripeEvent('customer.created', stripeCustomer()), newWebhookSecret());
    await postToConnection(url, stripeEvent('customer.created', stripeCustomer()), secret);
    expect(JSON.stringify(api.logs())).not.toContain(secret.slice(6));
  });
});

/** The cell that says what a command of docs/operator-cli.md's table prints, by its usage. */
function documentedRow(usage: string): string {
  const page = readFileSync(path.join(REPO_ROOT, 'docs/operator-cli.md'), 'utf8');
  const line = page.split('\n').find((text) => text.startsWith(`| \`${usage}\` |`));
  if (!line) throw new Error(`docs/operator-cli.md has no row for ${usage}`);
  return line;
}

describe('processor commands', () => {
  let stripe: FakeStripe;
  const apiKey = newApiKey();
  beforeAll(async () => {
    stripe = await FakeStripe.start(apiKey);
  });
  afterAll(async () => {
    await stripe.close();
  });

  const cli = (args: string[]) =>
    runCli(args, { DATABASE_URL: database.current.url, BASE_URL, STRIPE_API_BASE: stripe.url });
  /** `processor connect` for Stripe, with a key when one is given. */
  const connectStripe = (workspaceId: string, secret: string, key?: string) =>
    cli([
      'processor',
      'connect',
      '--workspace',
      workspaceId,
      '--provider',
      'stripe',
      '--webhook-secret',
      secret,
      ...(key === undefined ? [] : ['--api-key', key]),
    ]);

  it('connects with a key that answers: connected, the URL to paste, secrets by their last four only', async () => {
    const workspace = await createWorkspace(database.current.db, { name: 'Acme', processor: 'disconnected' });
    const secret = newWebhookSecret();
    const connected = await connectStripe(workspace.id, secret, apiKey);
    expect(connected.code).toBe(0);
    expect(connected.json).toMatchObject({
      provider: 'stripe',
      status: 'connected',
      webhook_url: `${BASE_URL}/processor/stripe/${connected.json.connection_id}`,
      webhook_secret_last4: secret.slice(-4),
      api_key_last4: apiKey.slice(-4),
      events_received: 0,
      last_event_at: null,
      backfill: { status: expect.stringMatching(/queued|running|succeeded/) },
    });
    expect(connected.stdout).not.toContain(secret);
    expect(connected.stdout).not.toContain(apiKey);
    expect(
      stripe.requests.some(
        (request) => request.path === '/v1/customers' && request.authorization === `Bearer ${apiKey}`,
      ),
    ).toBe(true);
    // At rest: sealed, not the secret.
    const row = await database.current.db('processor_connections').where({ workspace_id: workspace.id }).first();
    expect(JSON.stringify(row)).not.toContain(secret.slice(6));
    expect(JSON.stringify(row)).not.toContain(apiKey.slice(8));
    expect((await database.current.db('workspaces').where({ id: workspace.id }).first()).processor_status).toBe(
      'connected',
    );

    // A delivery signed with another secret: `processor status` says so, and what to check.
    const refused = await postToConnection(
      `${api.url}/processor/stripe/${connected.json.connection_id}`,
      stripeEvent('customer.created', stripeCustomer()),
      newWebhookSecret(),
    );
    expect(refused.status).toBe(400);
    // Counted after the answer (best effort).
    await eventually(() =>
      database.current
        .db('processor_refused_deliveries')
        .where({ connection_id: connected.json.connection_id })
        .first(),
    );
    const status = await cli(['processor', 'status', '--workspace', workspace.id]);
    expect(status.json.deliveries_refused).toMatchObject({
      count: 1,
      none_accepted_since: true,
      message: expect.stringMatching(
        /^1 delivery refused for a bad signature since \S+, the last at \S+: check the signing secret$/,
      ),
    });
    expect(status.json).toMatchObject({
      provider: 'stripe',
      status: 'connected',
      webhook_url: connected.json.webhook_url,
    });
    expect(status.json).toHaveProperty('backfill.counts');
    // docs/operator-cli.md's row for the command names every field it printed, and those of
    // deliveries_refused (it was left out of the row): the page cannot drift from the output.
    const documented = documentedRow('processor status --workspace W');
    const named = (field: string) => new RegExp(`\\b${field}\\b`).test(documented);
    const undocumented = [
      ...Object.keys(status.json).filter((field) => !named(field)),
      ...Object.keys(status.json.deliveries_refused)
        .filter((field) => !named(field))
        .map((field) => `deliveries_refused.${field}`),
    ];
    expect(undocumented).toEqual([]);
    expect(documented).toMatch(/deliveries_refused: null or \{count, since, last_at, none_accepted_since, message\}/);

    const again = await cli(['processor', 'sync', '--workspace', workspace.id]);
    // A backfill just queued by connect is still queued (no worker here): one run at a time.
    expect(again.code).toBe(1);
    expect(again.error?.type).toBe('conflict');

    const disconnected = await cli(['processor', 'disconnect', '--workspace', workspace.id]);
    expect(disconnected.json).toMatchObject({ status: 'disconnected', disconnected_reason: 'owner' });
    expect((await database.current.db('workspaces').where({ id: workspace.id }).first()).processor_status).toBe(
      'disconnected',
    );
    const log = await listSecurityEvents(database.current.db, workspace.id);
    expect(log.data.map((entry) => entry.action)).toEqual(['processor.disconnected', 'processor.connected']);
    expect(JSON.stringify(log)).not.toContain(secret.slice(6));
  }, 90_000);

  it('refuses a key Stripe answers with 401, saving nothing', async () => {
    const workspace = await createWorkspace(database.current.db, { name: 'Acme', processor: 'disconnected' });
    const result = await connectStripe(workspace.id, newWebhookSecret(), newApiKey());
    expect(result.code).toBe(1);
    expect(result.error).toEqual({ type: 'invalid_param', message: expect.stringContaining('401') });
    expect(
      await database.current.db('processor_connections').where({ workspace_id: workspace.id }).first(),
    ).toBeUndefined();
  });

  // Ten CLI processes, each a Node start through tsx: 17 s on a quiet machine, over 30 in a busy CI run.
  it('connects again without undoing a working connection: connected stays connected, a new key is tried first', async () => {
    const db = database.current.db;
    const workspace = await createWorkspace(db, { name: 'Acme', processor: 'disconnected' });
    const connect = (secret: string, key?: string) => connectStripe(workspace.id, secret, key);
    const workspaceFlag = async () => (await db('workspaces').where({ id: workspace.id }).first()).processor_status;
    const first = newWebhookSecret();
    const made = await connect(first);
    expect(made.json).toMatchObject({ status: 'pending' });
    const url = `${api.url}/processor/stripe/${made.json.connection_id}`;
    expect((await postToConnection(url, stripeEvent('customer.created', stripeCustomer()), first)).status).toBe(200);
    const working = await cli(['processor', 'status', '--workspace', workspace.id]);
    expect(working.json).toMatchObject({ status: 'connected', connected_at: expect.any(String) });

    // The same secret again, then a new one (rolled in Stripe), without a key: still connected,
    // since the same time, and the workspace's webhooks stay on.
    const same = await connect(first);
    expect(same.code).toBe(0);
    expect(same.json).toMatchObject({ status: 'connected', connected_at: working.json.connected_at });
    expect(await workspaceFlag()).toBe('connected');
    const rolled = newWebhookSecret();
    const afterRoll = await connect(rolled);
    expect(afterRoll.json).toMatchObject({
      status: 'connected',
      connected_at: working.json.connected_at,
      webhook_secret_last4: rolled.slice(-4),
      webhook_url: made.json.webhook_url,
    });
    expect(await workspaceFlag()).toBe('connected');
    // Events are verified with the new secret (each API process rereads the connection within a second).
    await eventually(
      async () =>
        (await postToConnection(url, stripeEvent('customer.created', stripeCustomer()), rolled)).status === 200,
      5_000,
      100,
    );
    expect((await postToConnection(url, stripeEvent('customer.created', stripeCustomer()), first)).status).toBe(400);

    // A key is tried before anything is saved: refused, the working connection is left as it was;
    // answered, it is connected (and a backfill queued).
    const refused = await connect(rolled, newApiKey());
    expect(refused.code).toBe(1);
    expect(refused.error).toEqual({ type: 'invalid_param', message: expect.stringContaining('401') });
    expect((await cli(['processor', 'status', '--workspace', workspace.id])).json).toMatchObject({
      status: 'connected',
      webhook_secret_last4: rolled.slice(-4),
      api_key_last4: null,
    });
    const keyed = await connect(rolled, apiKey);
    expect(keyed.json).toMatchObject({ status: 'connected', api_key_last4: apiKey.slice(-4) });
    expect(await workspaceFlag()).toBe('connected');

    // Without a key the stored one is kept, as it is: same sealed value, no new backfill.
    const stored = () => db('processor_connections').where({ workspace_id: workspace.id }).first();
    await db('processor_connections').where({ workspace_id: workspace.id }).update({ backfill_status: 'succeeded' });
    const keyedRow = await stored();
    const keptKey = await connect(newWebhookSecret());
    expect(keptKey.json).toMatchObject({
      status: 'connected',
      connected_at: keyed.json.connected_at,
      api_key_last4: apiKey.slice(-4),
      backfill: { status: 'succeeded' },
    });
    expect((await stored()).api_key_sealed).toBe(keyedRow.api_key_sealed);

    // A connection its owner disconnected starts again: its kept key is tried again first, as a
    // new one would be, and answered, it is connected (the key is still kept, no backfill queued).
    await cli(['processor', 'disconnect', '--workspace', workspace.id]);
    const tried = stripe.requests.length;
    expect((await connect(rolled)).json).toMatchObject({
      status: 'connected',
      api_key_last4: apiKey.slice(-4),
      disconnected_reason: null,
    });
    // Tried as a new key is: one item of each list the service needs read access to.
    expect(stripe.requests.slice(tried).map((request) => [request.path, request.authorization])).toEqual(
      expect.arrayContaining(
        ['customers', 'subscriptions', 'invoices', 'invoice_payments', 'payment_intents', 'events'].map((list) => [
          `/v1/${list}`,
          `Bearer ${apiKey}`,
        ]),
      ),
    );
    expect(stripe.requests.length - tried).toBe(6);
    expect((await stored()).api_key_sealed).toBe(keyedRow.api_key_sealed);
    expect(await workspaceFlag()).toBe('connected');

    const log = await listSecurityEvents(db, workspace.id);
    expect(
      log.data
        .filter((entry) => entry.action === 'processor.connected')
        .map((entry) => [entry.actor.type, entry.details.previous_status, entry.details.status])
        .reverse(),
    ).toEqual([
      ['operator', null, 'pending'],
      ['processor', undefined, 'connected'], // the first signed event
      ['operator', 'connected', 'connected'],
      ['operator', 'connected', 'connected'],
      ['operator', 'connected', 'connected'],
      ['operator', 'connected', 'connected'], // the key kept
      ['operator', 'disconnected', 'connected'], // the kept key answered again
    ]);
  }, 90_000);

  it('connects without a key as pending, refuses malformed secrets without echoing them, and sync needs a key', async () => {
    const workspace = await createWorkspace(database.current.db, { name: 'Acme', processor: 'connected' });
    const bad = await connectStripe(workspace.id, 'sk_live_notasecret123456789');
    expect(bad.code).toBe(1);
    expect(bad.error?.type).toBe('invalid_param');
    expect(bad.stderr).not.toContain('notasecret');
    const pending = await connectStripe(workspace.id, newWebhookSecret());
    expect(pending.json).toMatchObject({ status: 'pending', api_key_last4: null, backfill: { status: 'idle' } });
    expect((await database.current.db('workspaces').where({ id: workspace.id }).first()).processor_status).toBe(
      'disconnected',
    );
    const sync = await cli(['processor', 'sync', '--workspace', workspace.id]);
    expect(sync.error).toEqual({ type: 'conflict', message: expect.stringContaining('API key') });
    const none = await cli(['processor', 'status', '--workspace', '0b8e4a4e-0000-4000-8000-000000000000']);
    expect(none.error?.type).toBe('not_found');
    // A workspace with no connection yet is told the URL to register in Stripe, which connecting keeps.
    const fresh = await createWorkspace(database.current.db, { name: 'Not connected yet' });
    const planned = await cli(['processor', 'status', '--workspace', fresh.id]);
    expect(planned.json).toEqual({ status: 'not_connected', provider: null, webhook_url: expect.any(String) });
    const made = await connectStripe(fresh.id, newWebhookSecret());
    expect(made.json).toMatchObject({ webhook_url: planned.json.webhook_url });
  });
});
