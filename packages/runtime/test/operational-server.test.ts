import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Counter, createMetricsRegistry, createOperationalServer } from '../src/index.js';

let server: Server;
let base: string;
let redisUp = true;

beforeAll(async () => {
  const registry = createMetricsRegistry('worker');
  const deliveries = new Counter({
    name: 'deliveries_total',
    help: 'test',
    labelNames: ['outcome'],
    registers: [registry],
  });
  deliveries.inc({ outcome: 'success' }, 3);
  server = createOperationalServer({
    registry,
    readiness: {
      postgres: () => Promise.resolve(1),
      redis: () => (redisUp ? Promise.resolve('PONG') : Promise.reject(new Error('connection is closed'))),
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

describe('the operational server (the worker’s health and metrics port)', () => {
  it('answers /healthz', async () => {
    const response = await fetch(`${base}/healthz`);
    expect(response.status).toBe(200);
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect(await response.json()).toEqual({ status: 'ok' });
  });

  it('answers /readyz with 200, then 503 naming the check that failed', async () => {
    expect((await fetch(`${base}/readyz`)).status).toBe(200);
    redisUp = false;
    try {
      const response = await fetch(`${base}/readyz?verbose=1`);
      expect(response.status).toBe(503);
      expect(await response.json()).toMatchObject({
        status: 'unavailable',
        checks: { postgres: { status: 'up' }, redis: { status: 'down', error: 'connection is closed' } },
      });
    } finally {
      redisUp = true;
    }
  });

  it('serves its registry in the Prometheus text format, labelled with the service', async () => {
    const response = await fetch(`${base}/metrics`);
    expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = await response.text();
    expect(text).toContain('deliveries_total{outcome="success",service="worker"} 3');
    expect(text).toMatch(/^process_cpu_user_seconds_total\{service="worker"\} /m);
  });

  it('answers HEAD without a body, refuses other methods and paths', async () => {
    const head = await fetch(`${base}/healthz`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(await head.text()).toBe('');
    const post = await fetch(`${base}/healthz`, { method: 'POST' });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET, HEAD');
    expect((await fetch(`${base}/api/v1/campaigns`)).status).toBe(404);
  });
});
