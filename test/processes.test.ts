import { describe, expect, it } from '@jest/globals';
import { freePort, redisKeyPrefix, runId, startService, TEST_REDIS_URL, useTestDatabase } from '@retention/testkit';
import { npmRun } from './npm-run.js';

const database = useTestDatabase();

function environment(port: number): Record<string, string> {
  return {
    DATABASE_URL: database.current.url,
    REDIS_URL: TEST_REDIS_URL,
    REDIS_KEY_PREFIX: `${redisKeyPrefix(runId())}-processes`,
    PORT: String(port),
    WORKER_PORT: String(port + 1),
    API_INTERNAL_PORT: '0',
  };
}

describe('service processes', () => {
  it('the API starts, answers, and stops cleanly on SIGTERM', async () => {
    const port = await freePort();
    const api = startService('services/api/src/main.ts', environment(port));
    try {
      await api.waitFor(/API listening/);
      const response = await fetch(`http://127.0.0.1:${port}/healthz`);
      expect(response.status).toBe(200);
      // Readiness and metrics are on the internal port only.
      expect((await fetch(`http://127.0.0.1:${port}/readyz`)).status).toBe(404);
      expect((await fetch(`http://127.0.0.1:${port}/metrics`)).status).toBe(404);
      const internalPort = Number(/internal port (\d+)/.exec(api.output())?.[1]);
      expect(internalPort).toBeGreaterThan(0);
      expect((await fetch(`http://127.0.0.1:${internalPort}/readyz`)).status).toBe(200);
      expect(await (await fetch(`http://127.0.0.1:${internalPort}/metrics`)).text()).toContain('http_requests_total');
    } finally {
      expect(await api.stop('SIGTERM')).toBe(0);
    }
    expect(api.output()).toMatch(/"msg":"stopped"/);
  });

  it('the worker serves /healthz, /readyz and /metrics on WORKER_PORT, and stops cleanly on SIGINT', async () => {
    const port = await freePort();
    const worker = startService('services/worker/src/main.ts', environment(port - 1));
    try {
      await worker.waitFor(/worker started/);
      const health = await fetch(`http://127.0.0.1:${port}/healthz`);
      expect(health.status).toBe(200);
      const readiness = await fetch(`http://127.0.0.1:${port}/readyz`);
      expect(readiness.status).toBe(200);
      expect(await readiness.json()).toMatchObject({
        status: 'ready',
        checks: { postgres: { status: 'up' }, redis: { status: 'up' } },
      });
      const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
      for (const series of [
        'webhook_delivery_attempts_total',
        'webhook_delivery_attempt_duration_seconds',
        'webhook_endpoints_auto_disabled_total',
        'webhook_delivery_queue_jobs',
        'webhook_outbox_lag_seconds',
        'process_cpu_seconds_total',
      ]) {
        expect(metrics).toContain(`# TYPE ${series} `);
      }
    } finally {
      expect(await worker.stop('SIGINT')).toBe(0);
    }
  });

  it('`npm run start:api` stops the API on SIGTERM to npm, and npm exits 0', async () => {
    const port = await freePort();
    const api = npmRun('start:api', environment(port));
    try {
      await api.waitFor(/API listening/, 30_000);
      api.terminate();
      expect(await api.exited).toBe(0);
      // Nothing left behind serving: npm's signal reached the API itself.
      await expect(fetch(`http://127.0.0.1:${port}/healthz`)).rejects.toThrow();
      expect(api.output()).toMatch(/"msg":"stopped"/);
    } finally {
      api.cleanUp();
    }
  });

  it('`npm run start:worker` stops the worker on Ctrl-C, and npm exits 0', async () => {
    const port = await freePort();
    const worker = npmRun('start:worker', environment(port - 1));
    try {
      await worker.waitFor(/worker started/, 30_000);
      worker.interrupt();
      expect(await worker.exited).toBe(0);
      await expect(fetch(`http://127.0.0.1:${port}/healthz`)).rejects.toThrow();
      expect(worker.output()).toMatch(/"msg":"stopped"/);
    } finally {
      worker.cleanUp();
    }
  });

  it('a process that cannot reach its database says so and exits 1', async () => {
    const api = startService('services/api/src/main.ts', {
      ...environment(await freePort()),
      DATABASE_URL: 'postgres://127.0.0.1:1/none',
    });
    expect(await api.exited).toBe(1);
    // The login name is filled in as libpq would (a URL without a user).
    expect(api.output()).toMatch(/cannot reach PostgreSQL at postgres:\/\/([^@/]+@)?127\.0\.0\.1:1\/none/);
    expect(api.output()).not.toMatch(/\n\s+at /);
  });

  it('an invalid setting stops the process with a message naming it', async () => {
    const worker = startService('services/worker/src/main.ts', {
      ...environment(await freePort()),
      WEBHOOK_TIMEOUT_MS: 'fast',
    });
    expect(await worker.exited).toBe(1);
    expect(worker.output()).toContain('WEBHOOK_TIMEOUT_MS');
  });
});
