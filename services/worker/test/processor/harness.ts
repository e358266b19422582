import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, expect } from '@jest/globals';
import type { EventType } from '@retention/core';
import { connectProcessor, loadFixtures, OPERATOR } from '@retention/domain';
import { eventually, testSecretsKey, testSecretsKeyBytes } from '@retention/testkit';
import { startApiInstance, type ApiInstance } from '../../../api/test/api-instance.js';
import { useWorld, type RunningWorker, type Workspace } from '../support/world.js';
import {
  FakeStripe,
  newApiKey,
  newWebhookSecret,
  nowSeconds,
  postToConnection,
  stripeCustomer,
  stripeEvent,
  stripeSubscription,
} from './stripe-kit.js';

/**
 * A whole processor path per test: the API (receives), an in-process worker (applies and
 * delivers), a local Stripe stand-in (the key's lookups) and the verifying HTTPS receiver,
 * with a fresh workspace connected to Stripe and one endpoint subscribed to everything.
 */

export interface ProcessorWorld {
  workspaceId: string;
  connectionId: string;
  secret: string;
  url: string;
  endpointPath: string;
  worker: RunningWorker;
  stripe: FakeStripe;
  /** POSTs a signed event and waits until the worker applied (or ignored or parked) it. */
  deliver(event: { id: string }): Promise<{ state: string; last_error: string | null }>;
  /** The `type` and `data` of each webhook the receiver got, in arrival order, waiting for `count`. */
  webhooks(count: number): Promise<Array<{ type: EventType; data: Record<string, any> }>>;
  /** The same with each body's `created_at` (when the event happened). */
  webhookBodies(count: number): Promise<Array<{ type: EventType; created_at: string; data: Record<string, any> }>>;
}

export function useProcessorWorld() {
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

  /** `workerEnv`: more environment for the worker (SMTP_URL). */
  async function setUp(
    options: { withKey?: boolean; workerEnv?: Record<string, string> } = {},
  ): Promise<ProcessorWorld> {
    const { db, receiver } = world.current;
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
    const withKey = options.withKey ?? true;
    const connection = await connectProcessor(
      db,
      Buffer.from(testSecretsKey(), 'base64'),
      { workspace_id: workspaceId, provider: 'stripe', webhook_secret: secret, ...(withKey && { api_key: apiKey }) },
      withKey ? 'accepted' : 'none',
      OPERATOR,
    );
    // A connect with a key queues a backfill; these tests feed events, so it finds nothing.
    const endpointPath = `/hooks/${tag}`;
    await world.current.createEndpoint(
      endpointPath,
      { behaviour: { kind: 'status', status: 200 } },
      {
        workspace: { id: workspaceId, ownerId: loaded.workspaces.w!.users.owner! } as Workspace,
      },
    );
    const worker = await world.current.startWorker({ env: { STRIPE_API_BASE: stripe.url, ...options.workerEnv } });
    const url = `${api.url}/processor/stripe/${connection.id}`;
    const webhookBodies = async (count: number) => {
      const requests = await receiver.waitForRequests(endpointPath, count);
      expect(receiver.problems()).toEqual([]);
      return requests.map((request) => ({
        type: request.body.type as EventType,
        created_at: request.body.created_at as string,
        data: request.body.data as Record<string, any>,
      }));
    };
    return {
      workspaceId,
      connectionId: connection.id,
      secret,
      url,
      endpointPath,
      worker,
      stripe,
      async deliver(event) {
        const reply = await postToConnection(url, event, secret);
        if (reply.status !== 200) throw new Error(`delivery refused: ${JSON.stringify(reply.body)}`);
        return eventually(async () => {
          const row = await db('processor_events')
            .where({ connection_id: connection.id, psp_event_id: event.id })
            .first();
          return row && row.state !== 'pending' ? (row as { state: string; last_error: string | null }) : null;
        }, 15_000);
      },
      async webhooks(count) {
        return (await webhookBodies(count)).map(({ type, data }) => ({ type, data }));
      },
      webhookBodies,
    };
  }

  return {
    world,
    setUp,
    get api() {
      return api;
    },
    /** The Stripe stand-in, to fill before setUp (whose connect queues a backfill at once). */
    get stripe() {
      return stripe;
    },
  };
}

/**
 * A customer and their subscription, both made at `since` (30 days ago unless given) and mirrored
 * through their own events, for a suite that then fails, retries or pays their invoices.
 */
export async function subscribedCustomer(w: ProcessorWorld, since = nowSeconds() - 30 * 86_400) {
  const customer = stripeCustomer({ created: since });
  const subscription = stripeSubscription(customer.id, { created: since });
  await w.deliver(stripeEvent('customer.created', customer, { created: since }));
  await w.deliver(stripeEvent('customer.subscription.created', subscription, { created: since }));
  return { customer, subscription };
}
