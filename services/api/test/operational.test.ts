import { createHash, randomUUID } from 'node:crypto';
import { createServer, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { EVENT_TYPES, eventDataKeys, PING_EVENT_TYPE, SIGNATURE_HEADER } from '@retention/core';
import { loadFixtures } from '@retention/domain';
import { NODE_VERIFY_SNIPPET, SDK_VERIFY_SNIPPET } from '../src/openapi/webhook-snippets.js';
import { startApiInstance, useApiInstance } from './api-instance.js';
import { eventually, testSecretsKeyBytes } from '@retention/testkit';
import { PrivateRedis } from '../../worker/test/support/redis-server.js';

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

  it('is 503 naming where Redis is and what its connection last saw, never its password, when Redis goes away', async () => {
    // A redis-server of this test's own, killed by its PID: never the shared one.
    const password = 'pw-not-for-readyz';
    const redis = await PrivateRedis.start({ password });
    const api = await startApiInstance({ databaseUrl: instance.database.url, redisUrl: redis.url });
    try {
      // startApiInstance does not wait for a Redis it is given.
      await eventually(async () => (await api.internal('/readyz')).status === 200);
      await redis.stop('SIGKILL');
      // Before, ioredis's "Stream isn't writeable and enableOfflineQueue options is false".
      const reply = await eventually(async () => {
        const answer = await api.internal('/readyz');
        return answer.status === 503 && /ECONNREFUSED/.test(answer.text) ? answer : null;
      });
      expect(reply.body.checks.redis).toEqual({
        status: 'down',
        latency_ms: expect.any(Number),
        error: `Redis at 127.0.0.1:${redis.port}: connect ECONNREFUSED 127.0.0.1:${redis.port}`,
      });
      expect(reply.body.checks.postgres.status).toBe('up');
      expect(reply.text).not.toContain(password);
    } finally {
      await api.close();
      await redis.stop();
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

describe('the Webhooks section of GET /docs', () => {
  const htmlText = (text: string) =>
    text
      .replaceAll('&', '&amp;')
      .replaceAll('<', '&lt;')
      .replaceAll('>', '&gt;')
      .replaceAll('"', '&quot;')
      .replaceAll("'", '&#39;');

  /** The page's Webhooks section, and each event type's article in it. */
  async function webhooksSection(): Promise<{ section: string; article: (type: string) => string }> {
    const html = (await instance.api.get('/docs')).text;
    const section = /<section id="webhooks">([\s\S]*?)<\/section>/.exec(html)?.[1];
    if (!section) throw new Error('/docs has no <section id="webhooks">');
    return {
      section,
      article: (type) => {
        const id = `webhook-${type.replace(/[^A-Za-z0-9_-]/g, '-')}`;
        const article = new RegExp(`<article id="${id}">([\\s\\S]*?)</article>`).exec(section)?.[1];
        if (!article) throw new Error(`the Webhooks section has no article for ${type}`);
        return article;
      },
    };
  }

  it('is in the contents, with a link to every event type and to Send test’s ping', async () => {
    const html = (await instance.api.get('/docs')).text;
    const nav = /<nav>([\s\S]*?)<\/nav>/.exec(html)![1]!;
    expect(nav).toContain('<h2>Webhooks</h2>');
    expect(nav).toContain('<a href="#webhooks">');
    for (const type of [...EVENT_TYPES, PING_EVENT_TYPE])
      expect(nav).toContain(`<a href="#webhook-${type.replaceAll('.', '-')}"><code>${type}</code></a>`);
    // Every link of the contents leads to an element of the page.
    for (const [, target] of nav.matchAll(/href="#([^"]+)"/g)) expect(html).toContain(`id="${target}"`);
  });

  it('describes the signature scheme, its header, the tolerance, rolled secrets, retries and auto-disable', async () => {
    const { section } = await webhooksSection();
    expect(section).toContain('<h2>Webhooks</h2>');
    expect(section).toContain(`<code>${SIGNATURE_HEADER}</code>`);
    expect(section).toContain(`<code>${SIGNATURE_HEADER}: t=&lt;unix seconds&gt;,v1=&lt;hex&gt;</code>`);
    expect(section).toContain('<code>&lt;t&gt;.&lt;raw body&gt;</code>');
    expect(section).toContain('HMAC-SHA256');
    expect(section).toContain('300 seconds');
    expect(section).toContain('<code>t=…,v1=&lt;new&gt;,v1=&lt;old&gt;</code>');
    expect(section).toContain('<h3 id="webhooks-retries-and-auto-disable">Retries and auto-disable</h3>');
    expect(section).toContain('retried after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h, 24 h');
    expect(section).toContain('10 failed attempts in a row');
  });

  it('shows the verification snippets, the SDK’s and plain Node’s, as docs/webhooks.md has them', async () => {
    const { section } = await webhooksSection();
    expect(section).toContain(`<pre><code>${htmlText(SDK_VERIFY_SNIPPET.replace(/\n$/, ''))}</code></pre>`);
    expect(section).toContain(`<pre><code>${htmlText(NODE_VERIFY_SNIPPET.replace(/\n$/, ''))}</code></pre>`);
    expect(SDK_VERIFY_SNIPPET).toContain('verifyWebhook(');
  });

  it('describes each event type of the service’s catalog with every field of its data', async () => {
    const { article } = await webhooksSection();
    for (const type of EVENT_TYPES) {
      const text = article(type);
      expect(text).toContain(`<code>${type}</code>`);
      for (const field of ['type', 'created_at', 'data']) expect(text).toContain(`<code>${field}</code>`);
      for (const key of eventDataKeys(type))
        expect({ type, field: text.includes(`<code>data.${key}</code>`) }).toEqual({ type, field: true });
    }
    expect(article('recovery.lost')).toMatch(/<code>data\.reason<\/code> <span class="muted">optional<\/span>/);
    expect(article(PING_EVENT_TYPE)).toContain('<code>data.test</code>');
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
