import { beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { loadFixtures } from '@retention/domain';
import {
  eventually,
  freePort,
  redisKeyPrefix,
  runId,
  startService,
  TEST_REDIS_URL,
  useTestDatabase,
  testSecretsKeyBytes,
} from '@retention/testkit';

const database = useTestDatabase();

let token: string;
beforeAll(async () => {
  const result = await loadFixtures(database.current.db, testSecretsKeyBytes(), {
    workspaces: [
      {
        key: 'w',
        tokens: [{ key: 't', rate_limit: 1_000 }],
        customers: [{ key: 'c', subscriptions: [{ key: 's' }] }],
        campaigns: [{ key: 'k', customer: 'c' }],
      },
    ],
  });
  token = result.workspaces.w!.tokens.t!.token;
});

async function startApi(port: number) {
  const api = startService('services/api/src/main.ts', {
    DATABASE_URL: database.current.url,
    REDIS_URL: TEST_REDIS_URL,
    REDIS_KEY_PREFIX: `${redisKeyPrefix(runId())}-shutdown-${port}`,
    PORT: String(port),
  });
  await api.waitFor(/API listening/);
  return api;
}

/** Holds an exclusive lock on the campaigns table: any query of it waits until `release`. */
async function lockCampaigns() {
  const client = new pg.Client({ connectionString: database.current.url });
  await client.connect();
  await client.query('BEGIN');
  await client.query('LOCK TABLE recovery_campaigns IN ACCESS EXCLUSIVE MODE');
  return {
    async release() {
      await client.query('COMMIT');
      await client.end();
    },
  };
}

/** True once an API query is waiting on a lock: the request is in flight inside the API. */
async function apiQueryIsWaiting(): Promise<boolean> {
  const { rows } = await database.current.db.raw<{ rows: unknown[] }>(
    `SELECT 1 FROM pg_stat_activity
      WHERE datname = current_database() AND application_name = 'retention-api' AND wait_event_type = 'Lock'`,
  );
  return rows.length > 0;
}

describe('graceful shutdown of the API process', () => {
  it.each(['SIGTERM', 'SIGINT'] as const)(
    'on %s it stops accepting, finishes the request in flight with 200, closes its connections and exits 0',
    async (signal) => {
      const port = await freePort();
      const api = await startApi(port);
      const base = `http://127.0.0.1:${port}`;
      const headers = { authorization: `Bearer ${token}` };
      // A kept-alive, idle connection that must not hold the shutdown open.
      expect((await fetch(`${base}/api/v1/stats`, { headers })).status).toBe(200);

      const lock = await lockCampaigns();
      let released = false;
      try {
        const inFlight = fetch(`${base}/api/v1/campaigns`, { headers }).then(async (response) => ({
          status: response.status,
          connection: response.headers.get('connection'),
          body: (await response.json()) as { object: string; data: unknown[] },
          at: Date.now(),
        }));
        await eventually(apiQueryIsWaiting);

        api.child.kill(signal);
        await api.waitFor(/"msg":"stopping"/);
        await expect(fetch(`${base}/healthz`)).rejects.toThrow();
        expect(api.child.exitCode).toBeNull();

        await lock.release();
        released = true;
        const response = await inFlight;
        expect(response.status).toBe(200);
        expect(response.connection).toBe('close');
        expect(response.body).toMatchObject({
          object: 'list',
          data: [expect.objectContaining({ object: 'recovery_campaign' })],
        });

        expect(await api.exited).toBe(0);
        // Idle keep-alive connections were closed, not waited out (Node's keep-alive timeout is 5 s).
        expect(Date.now() - response.at).toBeLessThan(2_500);
        expect(api.output()).toMatch(/"msg":"stopped"/);
      } finally {
        if (!released) await lock.release();
        await api.stop('SIGKILL');
      }
    },
    30_000,
  );
});
