import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { connectProcessor, loadFixtures, OPERATOR, processorStatus } from '@retention/domain';
import {
  eventually,
  redisKeyPrefix,
  runCli,
  runId,
  startService,
  TEST_REDIS_URL,
  testSecretsKey,
  type ServiceProcess,
  testSecretsKeyBytes,
} from '@retention/testkit';
import { startApiInstance, type ApiInstance } from '../../../api/test/api-instance.js';
import { TEST_ENV, useWorld, type Workspace } from '../support/world.js';
import {
  FakeStripe,
  legacyInvoice,
  newApiKey,
  newWebhookSecret,
  nowSeconds,
  paymentIntent,
  postToConnection,
  stripeCustomer,
  stripeEvent,
  stripeSubscription,
} from './stripe-kit.js';

/**
 * The processor path under real process faults: a worker killed with kill -9 while applying
 * (and restarted on an empty Redis), and a backfill killed half-way and resumed by another
 * worker. Workers run as real processes, as in production.
 */

const world = useWorld();
let api: ApiInstance;
let stripe: FakeStripe;
const apiKey = newApiKey();

beforeAll(async () => {
  api = await startApiInstance({ databaseUrl: world.current.databaseUrl });
  stripe = await FakeStripe.start(apiKey);
});
afterAll(async () => {
  await api?.close();
  await stripe?.close();
});

const freshPrefix = () => `${redisKeyPrefix(runId())}-${randomBytes(4).toString('hex')}`;

function startWorkerProcess(env: Record<string, string> = {}): ServiceProcess {
  return startService('services/worker/src/main.ts', {
    DATABASE_URL: world.current.databaseUrl,
    REDIS_URL: TEST_REDIS_URL,
    REDIS_KEY_PREFIX: freshPrefix(),
    WORKER_PORT: '0',
    NODE_EXTRA_CA_CERTS: world.current.certificate.certPath,
    STRIPE_API_BASE: stripe.url,
    ...TEST_ENV,
    ...env,
  });
}

async function connectedWorkspace(withKey: boolean) {
  const { db } = world.current;
  const tag = randomBytes(4).toString('hex');
  const loaded = await loadFixtures(db, testSecretsKeyBytes(), {
    workspaces: [
      {
        key: 'w',
        name: `Shop ${tag}`,
        processor: 'disconnected',
        users: [{ key: 'owner', email: `owner.${tag}@example.com`, role: 'owner' }],
      },
    ],
  });
  const workspaceId = loaded.workspaces.w!.id;
  const secret = newWebhookSecret();
  const connection = await connectProcessor(
    db,
    Buffer.from(testSecretsKey(), 'base64'),
    { workspace_id: workspaceId, provider: 'stripe', webhook_secret: secret, ...(withKey && { api_key: apiKey }) },
    withKey ? 'accepted' : 'none',
    OPERATOR,
  );
  const path = `/hooks/${tag}`;
  await world.current.createEndpoint(
    path,
    { behaviour: { kind: 'status', status: 200 } },
    { workspace: { id: workspaceId, ownerId: loaded.workspaces.w!.users.owner! } as Workspace },
  );
  return {
    workspaceId,
    connectionId: connection.id,
    secret,
    url: `${api.url}/processor/stripe/${connection.id}`,
    path,
  };
}

describe('processor events under faults', () => {
  it('kill -9 mid-apply, then a new worker on an emptied Redis: every stored event applied exactly once', async () => {
    const { db, receiver } = world.current;
    const shop = await connectedWorkspace(true);
    const invoices = [];
    const events = [];
    for (let index = 0; index < 40; index += 1) {
      const customer = stripeCustomer();
      const subscription = stripeSubscription(customer.id);
      events.push(stripeEvent('customer.created', customer, { created: nowSeconds() - 500 }));
      events.push(stripeEvent('customer.subscription.created', subscription, { created: nowSeconds() - 400 }));
      if (index % 4 === 0) {
        const invoice = legacyInvoice(customer, subscription.id);
        stripe.paymentIntents.set(invoice.payment_intent, paymentIntent(invoice.payment_intent, 'insufficient_funds'));
        invoices.push(invoice);
        events.push(stripeEvent('invoice.payment_failed', invoice, { created: nowSeconds() - 300 }));
      }
    }
    // Every decline-code lookup takes 4 s: the first worker dies while applies are open.
    stripe.delayPaymentIntentsMs = 4_000;

    const first = startWorkerProcess();
    await first.waitFor(/worker started/);
    for (const event of events) expect((await postToConnection(shop.url, event, shop.secret)).status).toBe(200);
    // The worker is inside an apply (its lookup at Stripe is open) when it dies.
    await eventually(() => stripe.requests.some((request) => request.path.startsWith('/v1/payment_intents/')), 15_000);
    first.child.kill('SIGKILL');
    await first.exited;
    stripe.delayPaymentIntentsMs = 0;
    const pendingAfterKill = await db('processor_events').where({ connection_id: shop.connectionId, state: 'pending' });
    expect(pendingAfterKill.length).toBeGreaterThan(0);
    // The invoice whose lookup was open when the worker died was rolled back, not half-applied.
    const inFlight = stripe.requests
      .find((request) => request.path.startsWith('/v1/payment_intents/'))!
      .path.split('/')
      .pop();
    const interrupted = invoices.find((invoice) => invoice.payment_intent === inFlight)!;
    expect(pendingAfterKill.map((row) => row.payload.data.object.id)).toContain(interrupted.id);
    expect(
      await db('recovery_campaigns').where({ workspace_id: shop.workspaceId, psp_invoice_id: interrupted.id }),
    ).toHaveLength(0);

    // A new worker with an empty Redis (another key prefix): Postgres alone says what is left.
    const second = startWorkerProcess();
    try {
      await second.waitFor(/worker started/);
      await eventually(
        async () =>
          (await db('processor_events').where({ connection_id: shop.connectionId }).whereNot({ state: 'applied' }))
            .length === 0,
        30_000,
      );
      expect(await db('customers').where({ workspace_id: shop.workspaceId })).toHaveLength(40);
      expect(await db('subscriptions').where({ workspace_id: shop.workspaceId })).toHaveLength(40);
      const campaigns = await db('recovery_campaigns').where({ workspace_id: shop.workspaceId });
      expect(campaigns.map((campaign) => campaign.psp_invoice_id).sort()).toEqual(
        invoices.map((invoice) => invoice.id).sort(),
      );
      expect(campaigns.every((campaign) => campaign.decline_code === 'insufficient_funds')).toBe(true);
      // Exactly once: one recovery.opened per invoice in the outbox, and at the receiver.
      expect(await db('events').where({ workspace_id: shop.workspaceId, type: 'recovery.opened' })).toHaveLength(
        invoices.length,
      );
      const delivered = await receiver.waitForRequests(shop.path, invoices.length, 20_000);
      expect(new Set(delivered.map((request) => request.body.data.psp_invoice_id)).size).toBe(invoices.length);
      expect(await processorStatus(db, 'https://x.test', shop.workspaceId)).toMatchObject({
        events_received: events.length,
        events_pending: 0,
        events_parked: 0,
      });
    } finally {
      await second.stop();
    }
  }, 90_000);

  it('a backfill killed half-way resumes from its cursor in another worker, honours a 429, and emits no webhook', async () => {
    const { db } = world.current;
    const shop = await connectedWorkspace(false);
    stripe.customers = Array.from({ length: 230 }, (_, index) =>
      stripeCustomer({ id: `cus_bf${String(index).padStart(4, '0')}` }),
    );
    stripe.subscriptions = stripe.customers.slice(0, 120).map((customer, index) =>
      stripeSubscription(customer.id, {
        id: `sub_bf${String(index).padStart(4, '0')}`,
        status: index % 10 === 0 ? 'canceled' : 'active',
      }),
    );
    stripe.invoices = stripe.subscriptions.slice(0, 30).map((subscription, index) => {
      const customer = stripe.customers.find((candidate) => candidate.id === subscription.customer)!;
      const invoice = legacyInvoice(customer, subscription.id, {
        id: `in_bf${String(index).padStart(4, '0')}`,
        status: 'open',
        attempt_count: index % 3 === 0 ? 0 : 2,
      });
      stripe.paymentIntents.set(invoice.payment_intent, paymentIntent(invoice.payment_intent, 'do_not_honor'));
      return invoice;
    });
    const failedOpen = stripe.invoices.filter((invoice) => invoice.attempt_count > 0);
    stripe.pageDelayMs = 400;
    let rateLimited = 0;
    stripe.override = (_request, url) =>
      // The import's listing (100 a page), not the key's check of its permissions (one item).
      url.pathname === '/v1/subscriptions' && url.searchParams.get('limit') === '100' && rateLimited++ === 0
        ? {
            status: 429,
            body: { error: { type: 'invalid_request_error', code: 'rate_limit', message: 'Too many requests' } },
            headers: { 'retry-after': '1' },
          }
        : null;

    const sync = await runCli(
      [
        'processor',
        'connect',
        '--workspace',
        shop.workspaceId,
        '--provider',
        'stripe',
        '--webhook-secret',
        shop.secret,
        '--api-key',
        apiKey,
      ],
      { DATABASE_URL: world.current.databaseUrl, STRIPE_API_BASE: stripe.url },
    );
    expect(sync.json).toMatchObject({ status: 'connected', backfill: { status: 'queued' } });

    const first = startWorkerProcess();
    await first.waitFor(/backfill started/, 20_000);
    await eventually(async () => {
      const row = await db('processor_connections').where({ id: shop.connectionId }).first();
      return row.backfill_counts.customers >= 100;
    }, 20_000);
    first.child.kill('SIGKILL');
    await first.exited;
    const interrupted = await db('processor_connections').where({ id: shop.connectionId }).first();
    expect(interrupted).toMatchObject({ backfill_status: 'running', backfill_phase: 'customers' });
    expect(interrupted.backfill_cursor).toMatch(/^cus_bf/);
    const requestsBefore = stripe.requests.length;

    stripe.pageDelayMs = 0;
    const second = startWorkerProcess();
    try {
      await eventually(
        async () =>
          (await db('processor_connections').where({ id: shop.connectionId }).first()).backfill_status === 'succeeded',
        40_000,
      );
      // Resumed after the cursor, not from the start.
      const resumed = stripe.requests.slice(requestsBefore).find((request) => request.path === '/v1/customers');
      expect(resumed?.query.get('starting_after')).toBe(interrupted.backfill_cursor);
      const status = await processorStatus(db, 'https://x.test', shop.workspaceId);
      expect(status.backfill).toMatchObject({
        status: 'succeeded',
        counts: { customers: 230, subscriptions: 120, invoices: failedOpen.length },
        error: null,
      });
      expect(rateLimited).toBeGreaterThan(1);
      expect(await db('customers').where({ workspace_id: shop.workspaceId })).toHaveLength(230);
      expect(await db('subscriptions').where({ workspace_id: shop.workspaceId, status: 'canceled' })).toHaveLength(12);
      const campaigns = await db('recovery_campaigns').where({ workspace_id: shop.workspaceId });
      expect(campaigns.map((campaign) => campaign.psp_invoice_id).sort()).toEqual(
        failedOpen.map((invoice) => invoice.id).sort(),
      );
      expect(campaigns.every((campaign) => campaign.decline_code === 'do_not_honor')).toBe(true);
      // History: no webhook event at all.
      expect(await db('events').where({ workspace_id: shop.workspaceId })).toHaveLength(0);
    } finally {
      stripe.override = null;
      await second.stop();
    }
  }, 120_000);
});

describe('SECRETS_KEY', () => {
  it.each([
    ['SECRETS_KEY is missing', 'SECRETS_KEY', { SECRETS_KEY: '' }, ''],
    ['SECRETS_KEY is invalid', 'SECRETS_KEY', { SECRETS_KEY: 'not-a-key' }, 'not-a-key'],
    [
      'SECRETS_KEY_PREVIOUS is invalid',
      'SECRETS_KEY_PREVIOUS',
      { SECRETS_KEY: testSecretsKey(), SECRETS_KEY_PREVIOUS: 'not-a-key' },
      'not-a-key',
    ],
  ])(
    'when %s stops every process at start with a message naming it',
    async (_case, variable, keys, value) => {
      const env = {
        DATABASE_URL: world.current.databaseUrl,
        REDIS_URL: TEST_REDIS_URL,
        ...keys,
        WORKER_PORT: '0',
        PORT: '0',
      };
      // Four processes of their own, each failing by itself: started side by side, not in turn.
      const processes = [
        'services/api/src/main.ts',
        'services/worker/src/main.ts',
        'packages/db/src/migrate-cli.ts',
      ].map((entry) => startService(entry, env));
      const cli = await runCli(['processor', 'status', '--workspace', '0b8e4a4e-0000-4000-8000-000000000000'], env);
      for (const process of processes) {
        expect(await process.exited).toBe(1);
        expect(process.output()).toContain(`Invalid ${variable}:`);
        if (value) expect(process.output()).not.toContain(value);
      }
      expect(cli.code).not.toBe(0);
      expect(cli.stderr).toContain(`Invalid ${variable}:`);
    },
    60_000,
  );
});
