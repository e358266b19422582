import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from '@jest/globals';
import { loadFixtures } from '@retention/domain';
import {
  freePort,
  redisKeyPrefix,
  runId,
  startService,
  TEST_REDIS_URL,
  useTestDatabase,
  type ServiceProcess,
  testSecretsKeyBytes,
} from '@retention/testkit';

const database = useTestDatabase();

let secrets: { good: string; limited: string; revoked: string; unknown: string; webhook: string };
let api: ServiceProcess;
let output: string;
/** The Request-Id of every request of the session, in order. */
const requestIds: string[] = [];

beforeAll(async () => {
  const result = await loadFixtures(database.current.db, testSecretsKeyBytes(), {
    workspaces: [
      {
        key: 'w',
        tokens: [
          { key: 'good', rate_limit: 1_000 },
          { key: 'limited', rate_limit: 2 },
          { key: 'revoked', revoked: true },
        ],
        customers: [{ key: 'c', email: 'ann@example.com', subscriptions: [{ key: 's' }] }],
        campaigns: [{ key: 'k', customer: 'c' }],
        webhooks: [{ key: 'hook', name: 'main', url: 'https://receiver.example.com/hooks' }],
      },
    ],
  });
  const workspace = result.workspaces.w!;
  secrets = {
    good: workspace.tokens.good!.token,
    limited: workspace.tokens.limited!.token,
    revoked: workspace.tokens.revoked!.token,
    unknown: `sk_live_${'Z'.repeat(32)}`,
    webhook: workspace.webhooks.hook!.secret,
  };

  const port = await freePort();
  // The most verbose level: nothing that any level writes may hold a secret.
  api = startService('services/api/src/main.ts', {
    DATABASE_URL: database.current.url,
    REDIS_URL: TEST_REDIS_URL,
    REDIS_KEY_PREFIX: `${redisKeyPrefix(runId())}-logs`,
    PORT: String(port),
    LOG_LEVEL: 'trace',
  });
  await api.waitFor(/API listening/);

  const base = `http://127.0.0.1:${port}`;
  const call = async (path: string, headers: Record<string, string> = {}) => {
    const response = await fetch(`${base}${path}`, { headers });
    await response.arrayBuffer();
    requestIds.push(response.headers.get('request-id')!);
    return response.status;
  };
  const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
  const session: Array<[number, string, Record<string, string>?]> = [
    [200, '/api/v1/customers?email=ann%40example.com', bearer(secrets.good)],
    [200, `/api/v1/campaigns/${workspace.campaigns.k!}`, bearer(secrets.good)],
    [404, `/api/v1/customers/${randomUUID()}`, bearer(secrets.good)],
    [200, '/api/v1/stats', bearer(secrets.good)],
    [401, '/api/v1/campaigns', bearer(secrets.unknown)],
    [401, '/api/v1/campaigns', bearer(secrets.revoked)],
    [401, '/api/v1/campaigns', { authorization: `Basic ${Buffer.from(`user:${secrets.good}`).toString('base64')}` }],
    [401, '/api/v1/campaigns', { authorization: secrets.good }],
    [401, '/api/v1/campaigns'],
    // Secrets where they do not belong: in the path, in the query string, in other headers.
    [400, `/api/v1/customers/${secrets.good}`, bearer(secrets.good)],
    [400, `/api/v1/campaigns?cursor=${secrets.webhook}`, bearer(secrets.good)],
    [404, `/${secrets.webhook}/${secrets.good}`],
    [
      200,
      '/api/v1/stats',
      { ...bearer(secrets.good), 'x-signing-secret': secrets.webhook, cookie: `s=${secrets.good}` },
    ],
    [200, '/api/v1/stats', bearer(secrets.limited)],
    [200, '/api/v1/stats', bearer(secrets.limited)],
    [429, '/api/v1/stats', bearer(secrets.limited)],
    [429, '/api/v1/campaigns', bearer(secrets.limited)],
  ];
  for (const [status, path, headers] of session) expect([path, await call(path, headers)]).toEqual([path, status]);

  expect(await api.stop('SIGTERM')).toBe(0);
  output = api.output();
}, 60_000);

const logLines = () => output.split('\n').filter((line) => line.trim() !== '');

describe('the API log of a full session', () => {
  it('is JSON lines only', () => {
    for (const line of logLines()) expect(() => JSON.parse(line)).not.toThrow();
  });

  it('has exactly one request line per request, carrying its Request-Id, status and duration', () => {
    const requestLines = logLines()
      .map((line) => JSON.parse(line))
      .filter((line) => typeof line.requestId === 'string' && typeof line.status === 'number');
    expect(requestLines.map((line) => line.requestId).sort()).toEqual([...requestIds].sort());
    for (const line of requestLines) {
      expect(line).toMatchObject({ service: 'api', method: 'GET', path: expect.any(String) });
      expect(line.durationMs).toEqual(expect.any(Number));
    }
  });

  it('never holds a token, a signing secret or the Authorization header', () => {
    expect(output.length).toBeGreaterThan(1_000);
    for (const [name, secret] of Object.entries(secrets)) {
      expect([name, output.includes(secret)]).toEqual([name, false]);
      // Nor the secret's random part on its own.
      expect([name, output.includes(secret.slice(secret.indexOf('_', 3) + 1))]).toEqual([name, false]);
    }
    expect(output).not.toMatch(/authorization|bearer|basic /i);
    expect(output).not.toMatch(/sk_live_[A-Za-z0-9]{4}|whsec_[A-Za-z0-9]{4}/);
    expect(output).toContain('[redacted]');
  });
});
