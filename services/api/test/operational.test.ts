import { createHash, randomUUID } from 'node:crypto';
import { createServer, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { loadFixtures } from '@retention/domain';
import { startApiInstance, useApiInstance } from './api-instance.js';
import { testSecretsKeyBytes } from '@retention/testkit';

const instance = useApiInstance();

let token: string;
let limitedToken: string;
beforeAll(async () => {
  const result = await loadFixtures(instance.database.db, testSecretsKeyBytes(), {
    workspaces: [
      {
        key: 'w',
        tokens: [
          { key: 'main', rate_limit: 100_000 },
          { key: 'limited', rate_limit: 1 },
        ],
      },
    ],
  });
  token = result.workspaces.w!.tokens.main!.token;
  limitedToken = result.workspaces.w!.tokens.limited!.token;
});

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** The Prometheus text format, read back into samples. */
function parseMetrics(text: string): Sample[] {
  return text
    .split('\n')
    .filter((line) => line && !line.startsWith('#'))
    .map((line) => {
      const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
      if (!match) throw new Error(`not a sample line: ${line}`);
      const labels = Object.fromEntries(
        [...(match[2] ?? '').matchAll(/([a-zA-Z_]+)="((?:[^"\\]|\\.)*)"/g)].map((label) => [label[1]!, label[2]!]),
      );
      return { name: match[1]!, labels, value: Number(match[3]) };
    });
}

function sampleValue(samples: Sample[], name: string, labels: Record<string, string>): number | undefined {
  return samples.find(
    (sample) => sample.name === name && Object.entries(labels).every(([key, value]) => sample.labels[key] === value),
  )?.value;
}

describe('GET /healthz', () => {
  it('answers 200 without a token, a rate limit or caching', async () => {
    for (let i = 0; i < 3; i += 1) {
      const reply = await instance.api.get('/healthz');
      expect(reply.status).toBe(200);
      expect(reply.body).toEqual({ status: 'ok' });
      expect(reply.headers.get('x-ratelimit-limit')).toBeNull();
      expect(reply.headers.get('cache-control')).toBe('no-store');
      expect(reply.headers.get('request-id')).toMatch(/^req_/);
    }
  });
});

describe('GET /readyz', () => {
  it('is 200 with both backing services up, each with its latency', async () => {
    const reply = await instance.api.internal('/readyz');
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({
      status: 'ready',
      checks: {
        postgres: { status: 'up', latency_ms: expect.any(Number) },
        redis: { status: 'up', latency_ms: expect.any(Number) },
      },
    });
  });

  it('is 503 naming PostgreSQL when the database is unreachable', async () => {
    const api = await startApiInstance({ databaseUrl: 'postgres://postgres:postgres@127.0.0.1:1/nowhere' });
    try {
      const reply = await api.internal('/readyz');
      expect(reply.status).toBe(503);
      expect(reply.body.status).toBe('unavailable');
      expect(reply.body.checks.postgres).toEqual({
        status: 'down',
        latency_ms: expect.any(Number),
        error: expect.stringContaining('ECONNREFUSED'),
      });
      expect(reply.body.checks.redis.status).toBe('up');
      expect(reply.text).not.toContain('postgres:postgres');
      expect((await api.get('/healthz')).status).toBe(200);
    } finally {
      await api.close();
    }
  });

  it('is 503 naming Redis when Redis is unreachable', async () => {
    const api = await startApiInstance({ databaseUrl: instance.database.url, redisUrl: 'redis://127.0.0.1:1' });
    try {
      const reply = await api.internal('/readyz');
      expect(reply.status).toBe(503);
      expect(reply.body.checks.redis).toEqual({
        status: 'down',
        latency_ms: expect.any(Number),
        error: expect.any(String),
      });
      expect(reply.body.checks.postgres.status).toBe('up');
    } finally {
      await api.close();
    }
  });

  describe('with a database that accepts connections and never answers', () => {
    let blackHole: Server;
    const sockets = new Set<Socket>();
    let port: number;
    beforeAll(async () => {
      blackHole = createServer((socket) => {
        sockets.add(socket);
        socket.on('close', () => sockets.delete(socket));
      });
      await new Promise<void>((resolve) => blackHole.listen(0, '127.0.0.1', resolve));
      port = (blackHole.address() as { port: number }).port;
    });
    afterAll(async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => blackHole.close(() => resolve()));
    });

    it('answers 503 within its timeout instead of hanging', async () => {
      const api = await startApiInstance({ databaseUrl: `postgres://postgres:postgres@127.0.0.1:${port}/silent` });
      try {
        const started = Date.now();
        const reply = await api.internal('/readyz');
        const elapsed = Date.now() - started;
        expect(reply.status).toBe(503);
        expect(reply.body.checks.postgres).toMatchObject({ status: 'down', error: 'no answer within 1000 ms' });
        expect(elapsed).toBeGreaterThanOrEqual(900);
        expect(elapsed).toBeLessThan(3_000);
      } finally {
        // Hang up first, so the pool's pending connection fails now rather than at its own timeout.
        for (const socket of sockets) socket.destroy();
        await api.close();
      }
    });
  });
});

describe('GET /metrics', () => {
  it('counts requests by route pattern and status, never by raw path', async () => {
    const ids = [randomUUID(), randomUUID()];
    for (const id of ids) expect((await instance.api.get(`/api/v1/customers/${id}`, token)).status).toBe(404);
    expect((await instance.api.get('/api/v1/customers', token)).status).toBe(200);
    expect((await instance.api.get(`/api/v1/campaigns/${ids[0]}`)).status).toBe(401);
    expect((await instance.api.get('/api/v1/customers/%E0%A4%A', token)).status).toBe(400);
    expect((await instance.api.get(`/wp-admin/${ids[1]}`)).status).toBe(404);

    const reply = await instance.api.internal('/metrics');
    expect(reply.status).toBe(200);
    expect(reply.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(reply.headers.get('x-ratelimit-limit')).toBeNull();
    const samples = parseMetrics(reply.text);
    const requests = (labels: Record<string, string>) =>
      sampleValue(samples, 'http_requests_total', { service: 'api', method: 'GET', ...labels });
    expect(requests({ route: '/api/v1/customers/:id', status: '404' })).toBe(2);
    expect(requests({ route: '/api/v1/customers/:id', status: '400' })).toBe(1);
    expect(requests({ route: '/api/v1/customers', status: '200' })).toBe(1);
    expect(requests({ route: '/api/v1/campaigns/:id', status: '401' })).toBe(1);
    expect(requests({ route: 'unmatched', status: '404' })).toBe(1);
    for (const id of ids) expect(reply.text).not.toContain(id);
    expect(reply.text).not.toContain('wp-admin');

    expect(
      sampleValue(samples, 'http_request_duration_seconds_count', {
        route: '/api/v1/customers/:id',
        status: '404',
      }),
    ).toBe(2);
    expect(
      sampleValue(samples, 'http_request_duration_seconds_bucket', {
        route: '/api/v1/customers',
        status: '200',
        le: '+Inf',
      }),
    ).toBe(1);
  });

  it('labels a path the API answers 404 for as unmatched, not as the route it resembles (case, trailing slash)', async () => {
    const before = parseMetrics((await instance.api.internal('/metrics')).text);
    const unmatchedBefore = sampleValue(before, 'http_requests_total', { route: 'unmatched', status: '404' }) ?? 0;
    // The API's routes are case-sensitive and strict (apiRouter): these are not /api/v1/campaigns.
    for (const path of ['/api/v1/Campaigns', '/api/v1/campaigns/', '/API/v1/campaigns'])
      expect([path, (await instance.api.get(path, token)).status]).toEqual([path, 404]);
    // The dashboard's routes keep Express's lenient matching, and their label follows it.
    expect((await instance.api.get('/dashboard/api/ME')).status).toBe(401);

    const samples = parseMetrics((await instance.api.internal('/metrics')).text);
    const requests = (labels: Record<string, string>) =>
      sampleValue(samples, 'http_requests_total', { service: 'api', method: 'GET', ...labels });
    expect(requests({ route: '/api/v1/campaigns', status: '404' })).toBeUndefined();
    expect(requests({ route: 'unmatched', status: '404' })).toBe(unmatchedBefore + 3);
    expect(requests({ route: '/dashboard/api/me', status: '401' })).toBe(1);
  });

  it('counts rate-limit rejections by reason', async () => {
    expect((await instance.api.get('/api/v1/stats', limitedToken)).status).toBe(200);
    expect((await instance.api.get('/api/v1/stats', limitedToken)).status).toBe(429);
    expect((await instance.api.get('/api/v1/stats', limitedToken)).status).toBe(429);
    const samples = parseMetrics((await instance.api.internal('/metrics')).text);
    expect(sampleValue(samples, 'api_rate_limit_rejections_total', { reason: 'token' })).toBe(2);
    expect(sampleValue(samples, 'http_requests_total', { route: '/api/v1/stats', status: '429' })).toBe(2);
  });

  it('exposes the default process metrics', async () => {
    const samples = parseMetrics((await instance.api.internal('/metrics')).text);
    for (const name of [
      'process_cpu_user_seconds_total',
      'process_resident_memory_bytes',
      'nodejs_eventloop_lag_seconds',
    ])
      expect(sampleValue(samples, name, { service: 'api' })).toEqual(expect.any(Number));
  });
});

describe('the operational routes are outside /api/v1', () => {
  it('are never refused by the failed-authentication limit of an address', async () => {
    let refused = 0;
    for (let i = 0; i < 62 && refused === 0; i += 1) {
      if ((await instance.api.get('/api/v1/stats', 'sk_live_guessing')).status === 429) refused += 1;
    }
    expect(refused).toBe(1);
    const samples = parseMetrics((await instance.api.internal('/metrics')).text);
    expect(sampleValue(samples, 'api_rate_limit_rejections_total', { reason: 'failed_auth' })).toBe(1);
    for (const path of ['/healthz', '/openapi.json', '/docs']) expect((await instance.api.get(path)).status).toBe(200);
    for (const path of ['/healthz', '/readyz', '/metrics'])
      expect((await instance.api.internal(path)).status).toBe(200);
  });
});

describe('GET /docs', () => {
  it('is one self-contained page with no script, under a strict Content-Security-Policy', async () => {
    const reply = await instance.api.get('/docs');
    expect(reply.status).toBe(200);
    expect(reply.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(reply.headers.get('x-content-type-options')).toBe('nosniff');
    const policy = reply.headers.get('content-security-policy')!;
    expect(policy).toContain("default-src 'none'");
    expect(policy).toContain("frame-ancestors 'none'");
    expect(policy).not.toMatch(/script-src|unsafe-inline|https?:/);

    const html = reply.text;
    expect(html).not.toMatch(/<script|<link|<img|<iframe|\bon[a-z]+=|src=|url\(/i);
    expect(html).not.toMatch(/(href|action)="(https?:)?\/\//i);
    const styles = [...html.matchAll(/<style>([\s\S]*?)<\/style>/g)].map((match) => match[1]!);
    expect(styles).toHaveLength(1);
    const hash = createHash('sha256').update(styles[0]!).digest('base64');
    expect(policy).toContain(`style-src 'sha256-${hash}'`);
  });

  it('describes every operation, parameter, error type and object of the OpenAPI document', async () => {
    const [html, document] = [(await instance.api.get('/docs')).text, (await instance.api.get('/openapi.json')).body];
    for (const [path, methods] of Object.entries<any>(document.paths)) {
      expect(html).toContain(`<code>${path}</code>`);
      for (const parameter of methods.get.parameters) expect(html).toContain(`<code>${parameter.name}</code>`);
    }
    for (const type of [
      'authentication_required',
      'invalid_token',
      'invalid_param',
      'not_found',
      'rate_limit_exceeded',
      'database_error',
    ])
      expect(html).toContain(`<code>${type}</code>`);
    for (const name of Object.keys(document.components.schemas)) expect(html).toContain(`id="schema-${name}"`);
    expect(html).toContain('<code>recovery.by_decline_category.fraud.opened</code>');
    expect(html).toContain('<a href="/openapi.json">');
  });
});

describe('GET /openapi.json', () => {
  it('is public JSON any origin may read', async () => {
    const reply = await instance.api.get('/openapi.json', undefined, { headers: { origin: 'https://editor.example' } });
    expect(reply.status).toBe(200);
    expect(reply.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(reply.headers.get('access-control-allow-origin')).toBe('*');
    expect(reply.body.openapi).toBe('3.1.0');
  });
});

describe('the internal port', () => {
  // Last in the file: its 404s on the public port would count in the metrics tests above.
  it('serves /readyz and /metrics; the public port does not, and keeps /healthz', async () => {
    for (const path of ['/readyz', '/metrics']) {
      const reply = await instance.api.get(path);
      expect(reply.status).toBe(404);
      expect(reply.body.error.type).toBe('not_found');
      expect((await instance.api.internal(path)).status).toBe(200);
    }
    expect((await instance.api.get('/healthz')).status).toBe(200);
    expect((await instance.api.internal('/healthz')).status).toBe(200);
    // The internal port is not the API: no routes of it there.
    expect((await instance.api.internal('/api/v1/stats')).status).toBe(404);
  });
});
