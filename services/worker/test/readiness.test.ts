import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  eventually,
  redisKeyPrefix,
  runId,
  startService,
  useTestDatabase,
  type ServiceProcess,
} from '@retention/testkit';
import { PrivateRedis } from './support/redis-server.js';

/**
 * The worker's /readyz with its Redis gone: README ("Health") promises that a 503 names the
 * dependency that failed and why, as the driver said it. For Redis that was ioredis's
 * "Stream isn't writeable and enableOfflineQueue options is false", which says neither.
 * A redis-server of the test's own, with a password, killed by its PID.
 */

const database = useTestDatabase();
const PASSWORD = 'pw-not-for-readyz';
let redis: PrivateRedis;
let worker: ServiceProcess | undefined;

beforeAll(async () => {
  redis = await PrivateRedis.start({ password: PASSWORD });
});

afterAll(async () => {
  await worker?.stop();
  await redis.stop();
});

describe("the worker's /readyz with Redis down", () => {
  it("names Redis's address and the connection's last error, never its password", async () => {
    worker = startService('services/worker/src/main.ts', {
      DATABASE_URL: database.current.url,
      REDIS_URL: redis.url,
      REDIS_KEY_PREFIX: `${redisKeyPrefix(runId())}-readiness`,
      WORKER_PORT: '0',
    });
    await worker.waitFor(/worker started/);
    const port = /"port":(\d+)/.exec(worker.output())![1];
    const readyz = async () => {
      const reply = await fetch(`http://127.0.0.1:${port}/readyz`);
      return { status: reply.status, text: await reply.text() };
    };
    expect((await readyz()).status).toBe(200);

    await redis.stop('SIGKILL');
    const down = await eventually(async () => {
      const reply = await readyz();
      return reply.status === 503 && /ECONNREFUSED/.test(reply.text) ? reply : null;
    });
    const body = JSON.parse(down.text);
    expect(body.checks.postgres.status).toBe('up');
    expect(body.checks.redis).toEqual({
      status: 'down',
      latency_ms: expect.any(Number),
      error: `Redis at 127.0.0.1:${redis.port}: connect ECONNREFUSED 127.0.0.1:${redis.port}`,
    });
    expect(down.text).not.toContain(PASSWORD);

    // Back: ready again.
    await redis.restart();
    await eventually(async () => (await readyz()).status === 200);
  }, 60_000);
});
