import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createEndpoint, loadFixtures } from '@retention/domain';
import {
  redisKeyPrefix,
  runCli,
  runId,
  startService,
  TEST_REDIS_URL,
  useTestDatabase,
  type ServiceProcess,
  testSecretsKeyBytes,
} from '@retention/testkit';
import { createTestCertificate, type TestCertificate } from '../services/worker/test/support/certificate.js';
import { Receiver } from '../services/worker/test/support/receiver.js';

/**
 * Two API processes and two worker processes side by side on one database and one Redis,
 * as `docker compose up --scale` runs them: the rate limit, revocation, dispatch and the
 * periodic jobs must behave exactly as with one of each.
 */

const database = useTestDatabase();
const BASE_URL = 'https://retention.test';
const STALE_CHECK_MS = 400;
const STALE_CAMPAIGNS = 40;
const FRESH_CAMPAIGNS = 10;

let certificate: TestCertificate;
let receiver: Receiver;
let apis: Array<{ process: ServiceProcess; url: string }> = [];
let workers: ServiceProcess[] = [];
let ids: Awaited<ReturnType<typeof loadFixtures>>['workspaces'][string];

const daysAgo = (days: number) => new Date(Date.now() - days * 86_400_000).toISOString();

beforeAll(async () => {
  const { db, url: databaseUrl } = database.current;
  certificate = await createTestCertificate();
  receiver = await Receiver.start(certificate, BASE_URL);
  const campaigns = [
    ...Array.from({ length: STALE_CAMPAIGNS }, (_, i) => ({ customer: `c${i}`, first_failed_at: daysAgo(60) })),
    ...Array.from({ length: FRESH_CAMPAIGNS }, (_, i) => ({
      customer: `c${STALE_CAMPAIGNS + i}`,
      first_failed_at: daysAgo(2),
    })),
  ];
  const loaded = await loadFixtures(db, testSecretsKeyBytes(), {
    workspaces: [
      {
        key: 'w',
        users: [{ key: 'owner', email: 'owner@replicas.test', role: 'owner' }],
        tokens: [
          { key: 'limited', rate_limit: 30 },
          { key: 'doomed', rate_limit: 1000 },
        ],
        customers: campaigns.map((_, i) => ({ key: `c${i}`, email: `c${i}@replicas.test`, subscriptions: [{}] })),
        campaigns,
      },
    ],
  });
  ids = loaded.workspaces.w!;
  // Endpoints receive the events created after them: register it before any worker starts.
  const endpoint = await createEndpoint(db, testSecretsKeyBytes(), {
    workspace_id: ids.id,
    actor_id: ids.users.owner!,
    name: 'replicas',
    url: receiver.url('/replicas'),
  });
  receiver.route('/replicas', { secret: endpoint.secret, behaviour: { kind: 'status', status: 204 } });

  const shared = {
    DATABASE_URL: databaseUrl,
    REDIS_URL: TEST_REDIS_URL,
    REDIS_KEY_PREFIX: `${redisKeyPrefix(runId())}-replicas`,
    BASE_URL,
    NODE_EXTRA_CA_CERTS: certificate.certPath,
    WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
    WEBHOOK_TIMEOUT_MS: '2000',
    WEBHOOK_RETRY_DELAYS: '200ms,200ms,200ms',
    STALE_CAMPAIGN_DAYS: '30',
    STALE_CAMPAIGN_CHECK_INTERVAL: `${STALE_CHECK_MS}ms`,
    LOG_LEVEL: 'debug',
  };
  workers = [0, 1].map(() => startService('services/worker/src/main.ts', { ...shared, WORKER_PORT: '0' }));
  // PORT 0: each API listens where the system puts it and says where. A port picked here and
  // freed for it could be picked again for the other (both failed with EADDRINUSE under CI load).
  const listening = /API listening on http:\/\/localhost:(\d+)/;
  apis = [0, 1].map(() => ({
    process: startService('services/api/src/main.ts', { ...shared, PORT: '0' }),
    url: '',
  }));
  await Promise.all([
    ...workers.map((worker) => worker.waitFor(/worker started/, 60_000)),
    ...apis.map((api) => api.process.waitFor(listening, 60_000)),
  ]);
  for (const api of apis) api.url = `http://127.0.0.1:${listening.exec(api.process.output())![1]!}`;
}, 120_000);

afterAll(async () => {
  const codes = await Promise.all([...workers, ...apis.map((api) => api.process)].map((child) => child.stop()));
  await receiver?.close();
  await certificate?.remove();
  expect(codes).toEqual([0, 0, 0, 0]);
}, 60_000);

function get(apiIndex: number, path: string, token: string): Promise<Response> {
  return fetch(`${apis[apiIndex % apis.length]!.url}${path}`, { headers: { authorization: `Bearer ${token}` } });
}

describe('two APIs and two workers side by side', () => {
  it('close each stale campaign once, write one event each, and deliver each event once', async () => {
    const { db } = database.current;
    await receiver.waitForRequests('/replicas', STALE_CAMPAIGNS, 60_000);
    // A few more periods: neither replica closes or sends anything again.
    await new Promise((resolve) => setTimeout(resolve, 4 * STALE_CHECK_MS));

    const statuses = await db('recovery_campaigns').where({ workspace_id: ids.id }).select('status');
    expect(statuses.filter((row) => row.status === 'abandoned')).toHaveLength(STALE_CAMPAIGNS);
    expect(statuses.filter((row) => row.status === 'in_flight')).toHaveLength(FRESH_CAMPAIGNS);
    const events = await db('events').where({ workspace_id: ids.id }).select('type', 'data');
    expect(events).toHaveLength(STALE_CAMPAIGNS);
    expect(events.every((event) => event.type === 'recovery.lost' && event.data.reason === 'auto_close_stale')).toBe(
      true,
    );

    const requests = receiver.requestsTo('/replicas');
    expect(receiver.problems()).toEqual([]);
    expect(requests).toHaveLength(STALE_CAMPAIGNS);
    expect(new Set(requests.map((request) => request.body.data.campaign_id)).size).toBe(STALE_CAMPAIGNS);
  });

  it('run the periodic job once per period, not once per replica', async () => {
    const runs = () =>
      workers
        .flatMap((worker) => worker.output().split('\n'))
        .filter((line) => line.includes('"msg":"periodic job ran"') && line.includes('close-stale-campaigns')).length;
    const before = runs();
    const started = Date.now();
    await new Promise((resolve) => setTimeout(resolve, 10 * STALE_CHECK_MS));
    const periods = (Date.now() - started) / STALE_CHECK_MS;
    const ran = runs() - before;
    expect(ran).toBeGreaterThan(0);
    // One replica per period would make `periods` runs; two would make twice that.
    expect(ran).toBeLessThanOrEqual(Math.ceil(periods) + 1);
  });

  it('share one rate-limit window per token: exactly the limit succeeds across both APIs', async () => {
    const token = ids.tokens.limited!.token;
    const responses = await Promise.all(Array.from({ length: 80 }, (_, i) => get(i, '/api/v1/stats', token)));
    const statuses = responses.map((response) => response.status);
    expect(statuses.filter((status) => status === 200)).toHaveLength(30);
    expect(statuses.filter((status) => status === 429)).toHaveLength(50);
    for (const response of responses) expect(response.headers.get('x-ratelimit-limit')).toBe('30');
  });

  it('apply a revocation on the very next request, on both APIs', async () => {
    const token = ids.tokens.doomed!.token;
    for (const index of [0, 1]) expect((await get(index, '/api/v1/customers', token)).status).toBe(200);
    const revoked = await runCli(['token', 'revoke', '--id', ids.tokens.doomed!.id], {
      DATABASE_URL: database.current.url,
      REDIS_URL: TEST_REDIS_URL,
      REDIS_KEY_PREFIX: `${redisKeyPrefix(runId())}-replicas`,
    });
    expect(revoked.code).toBe(0);
    for (const index of [0, 1]) {
      const response = await get(index, '/api/v1/customers', token);
      expect(response.status).toBe(401);
      expect(((await response.json()) as { error: { type: string } }).error.type).toBe('invalid_token');
    }
  });
});
