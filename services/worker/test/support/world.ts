import { randomBytes, randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import { afterAll, afterEach, beforeAll } from '@jest/globals';
import { loadConfig, type EventData, type EventType } from '@retention/core';
import type { Db } from '@retention/db';
import { createEndpoint, loadFixtures, recordEvent, type OutboxEvent } from '@retention/domain';
import { createLogger } from '@retention/runtime';
import {
  redisKeyPrefix,
  runId,
  TEST_REDIS_URL,
  useTestDatabase,
  testSecretsKey,
  testSecretsKeyBytes,
} from '@retention/testkit';
import { createWorker, type WorkerHandle, type WorkerOptions } from '../../src/worker.js';
import { createTestCertificate, type TestCertificate } from './certificate.js';
import { Receiver, type Route } from './receiver.js';

/**
 * Everything a delivery test needs: its own database with a workspace (owner, admin and
 * member, a customer with a subscription), a verifying HTTPS receiver with a certificate
 * made for this run, and in-process workers on a Redis key prefix of their own.
 */

export const BASE_URL = 'https://retention.test';

/** Short timeouts and retry delays keep the suite fast; tests that need others say so. */
export const TEST_ENV = {
  WEBHOOK_TIMEOUT_MS: '1000',
  WEBHOOK_RETRY_DELAYS: Array(9).fill('100ms').join(','),
  WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
  BASE_URL,
  LOG_LEVEL: 'info',
};

export interface Workspace {
  id: string;
  ownerId: string;
  adminId: string;
  memberId: string;
  customerEmail: string;
  customerId: string;
  subscriptionId: string;
  campaignId: string;
  sessionId: string;
}

export interface TestEndpoint {
  id: string;
  secret: string;
  path: string;
  url: string;
}

export interface RunningWorker {
  handle: WorkerHandle;
  prefix: string;
  /** Log lines written so far, parsed. */
  logs(): Array<Record<string, any>>;
  /** Everything written, as it was written: to check that no secret ever reaches a log. */
  rawLogs(): string;
}

export interface World {
  db: Db;
  databaseUrl: string;
  receiver: Receiver;
  certificate: TestCertificate;
  workspace: Workspace;
  /** Another workspace, whose processor is disconnected. */
  disconnected: Workspace;
  /** A new connected workspace: room for more endpoints than one workspace may have (16). */
  addWorkspace(): Promise<Workspace>;
  createEndpoint(path: string, route: Omit<Route, 'secret'>, options?: EndpointOptions): Promise<TestEndpoint>;
  record(events: Array<SampleEvent>, workspaceId?: string): Promise<OutboxEvent[]>;
  /** Starts a worker in this process; `prefix` makes it a replica of another worker. */
  startWorker(setup?: {
    env?: Record<string, string>;
    options?: WorkerOptions;
    prefix?: string;
  }): Promise<RunningWorker>;
}

interface EndpointOptions {
  events?: EventType[];
  workspace?: Workspace;
  host?: string;
}

export type SampleEvent = { [T in EventType]: { type: T; data: EventData<T> } }[EventType];

export function useWorld(): { readonly current: World } {
  const database = useTestDatabase();
  let world: World | undefined;
  const workers: RunningWorker[] = [];

  beforeAll(async () => {
    const db = database.current.db;
    const certificate = await createTestCertificate();
    const receiver = await Receiver.start(certificate, BASE_URL);
    const [workspace, disconnected] = await Promise.all([
      seedWorkspace(db, 'connected'),
      seedWorkspace(db, 'disconnected'),
    ]);
    world = {
      db,
      databaseUrl: database.current.url,
      receiver,
      certificate,
      workspace,
      disconnected,
      addWorkspace: () => seedWorkspace(db, 'connected'),
      async createEndpoint(path, route, options = {}) {
        const owner = options.workspace ?? workspace;
        const url = receiver.url(path, options.host);
        const endpoint = await createEndpoint(db, testSecretsKeyBytes(), {
          workspace_id: owner.id,
          actor_id: owner.ownerId,
          name: path,
          url,
          ...(options.events && { events: options.events }),
        });
        receiver.route(path, { ...route, secret: endpoint.secret });
        return { id: endpoint.id, secret: endpoint.secret, path, url };
      },
      async record(events, workspaceId = workspace.id) {
        return db.transaction(async (trx) => {
          const recorded: OutboxEvent[] = [];
          for (const event of events) recorded.push(await recordEvent(trx, workspaceId, event.type, event.data));
          return recorded;
        });
      },
      async startWorker(setup = {}) {
        const prefix = setup.prefix ?? `${redisKeyPrefix(runId())}-${randomBytes(4).toString('hex')}`;
        const config = loadConfig({
          SECRETS_KEY: testSecretsKey(),
          DATABASE_URL: database.current.url,
          REDIS_URL: TEST_REDIS_URL,
          REDIS_KEY_PREFIX: prefix,
          ...TEST_ENV,
          ...setup.env,
        });
        let raw = '';
        const sink = new Writable({
          write(chunk: Buffer, _encoding, callback) {
            raw += chunk.toString('utf8');
            callback();
          },
        });
        const handle = await createWorker({
          config,
          db,
          logger: createLogger('worker', config.logLevel, sink),
          options: { receiverCa: certificate.cert, ...setup.options },
        });
        const running: RunningWorker = {
          handle,
          prefix,
          rawLogs: () => raw,
          logs: () =>
            raw
              .split('\n')
              .filter(Boolean)
              .map((line) => JSON.parse(line) as Record<string, any>),
        };
        workers.push(running);
        return running;
      },
    };
  });

  afterEach(async () => {
    await Promise.all(workers.splice(0).map((worker) => worker.handle.close()));
    // Each test's endpoints stay its own: later tests' events do not reach them.
    await world?.db('webhook_endpoints').update({ enabled: false, disabled_reason: 'manual' });
  });

  afterAll(async () => {
    await world?.receiver.close();
    await world?.certificate.remove();
  });

  return {
    get current() {
      if (!world) throw new Error('the world is built in beforeAll');
      return world;
    },
  };
}

async function seedWorkspace(db: Db, processor: 'connected' | 'disconnected'): Promise<Workspace> {
  const email = `ann.${randomBytes(3).toString('hex')}@example.com`;
  const result = await loadFixtures(db, testSecretsKeyBytes(), {
    workspaces: [
      {
        key: 'w',
        name: `Acme ${processor}`,
        processor,
        users: [
          { key: 'owner', email: `owner.${email}`, role: 'owner' },
          { key: 'admin', email: `admin.${email}`, role: 'admin' },
          { key: 'member', email: `member.${email}`, role: 'member' },
        ],
        customers: [{ key: 'c1', email, subscriptions: [{ key: 's1' }] }],
        campaigns: [{ key: 'k1', customer: 'c1' }],
        cancel_sessions: [{ key: 'x1', customer: 'c1', outcome: 'saved_discount' }],
      },
    ],
  });
  const created = result.workspaces.w!;
  return {
    id: created.id,
    ownerId: created.users.owner!,
    adminId: created.users.admin!,
    memberId: created.users.member!,
    customerEmail: email,
    customerId: created.customers.c1!,
    subscriptionId: created.subscriptions.s1!,
    campaignId: created.campaigns.k1!,
    sessionId: created.cancel_sessions.x1!,
  };
}

/** One event of each of the eight types, and each variant of recovery.lost, with valid data. */
export function eventsOfEveryType(workspace: Workspace): SampleEvent[] {
  const campaign = {
    campaign_id: workspace.campaignId,
    customer_email: workspace.customerEmail,
    amount_cents: 4900,
    currency: 'usd',
  };
  const session = {
    session_id: workspace.sessionId,
    reason_code: 'too_expensive' as const,
    customer_email: workspace.customerEmail,
    monthly_mrr_cents: 4900,
    currency: 'usd',
  };
  return [
    {
      type: 'recovery.opened',
      data: {
        ...campaign,
        decline_code: 'insufficient_funds',
        decline_category: 'soft',
        psp_invoice_id: 'in_test_1',
      },
    },
    { type: 'recovery.recovered', data: { ...campaign, recovered_via: 'customer_update' } },
    { type: 'recovery.lost', data: campaign },
    { type: 'recovery.lost', data: { ...campaign, reason: 'auto_close_stale' } },
    { type: 'recovery.lost', data: { ...campaign, source: 'dashboard' } },
    { type: 'cancel.saved', data: { ...session, outcome: 'saved_discount' } },
    { type: 'cancel.lost', data: { ...session, outcome: 'canceled' } },
    {
      type: 'trial.reminder_sent',
      data: {
        reminder_id: randomUUID(),
        customer_email: workspace.customerEmail,
        subscription_id: workspace.subscriptionId,
        trial_end: '2026-04-01T00:00:00.000Z',
      },
    },
    {
      type: 'reactivation.sent',
      data: {
        reactivation_id: randomUUID(),
        customer_email: workspace.customerEmail,
        subscription_id: workspace.subscriptionId,
      },
    },
    {
      type: 'winback.recorded',
      data: {
        winback_id: randomUUID(),
        customer_email: workspace.customerEmail,
        psp_subscription_id: 'sub_test_1',
        days_away: 42,
        amount_cents: 4900,
        currency: 'usd',
      },
    },
  ];
}

/** A `reactivation.sent` whose reactivation_id tells the receiver which event it is. */
export function numberedEvent(workspace: Workspace, id = randomUUID()): SampleEvent {
  return {
    type: 'reactivation.sent',
    data: { reactivation_id: id, customer_email: workspace.customerEmail, subscription_id: workspace.subscriptionId },
  };
}
