import { readFileSync } from 'node:fs';
import { createServer, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from '@jest/globals';
import {
  ApiError,
  Client,
  ConnectionError,
  RateLimitError,
  SDK_VERSION,
  UnexpectedResponseError,
  type ClientOptions,
} from '@retention/sdk';
import { freePort } from '@retention/testkit';
import { json, scriptedServer } from './scripted-server.js';
import { rejectionOf } from '../../../services/api/test/client-helpers.js';

const TOKEN = 'sk_live_wire0000000000000000000000000';
const client = (baseUrl: string, options: Partial<ClientOptions> = {}) =>
  new Client({ token: TOKEN, baseUrl, ...options });

const emptyList = { object: 'list', data: [], has_more: false, next_cursor: null };

describe('what the client sends', () => {
  it('a GET under /api/v1 with the bearer token, JSON accept and its User-Agent', async () => {
    const server = await scriptedServer((_req, res) => json(res, 200, emptyList));
    await client(server.url).campaigns.list({ status: 'lost', cursor: '2026-03-07T09:15:02.123+01:00' });
    const [request] = server.requests;
    expect(request!.method).toBe('GET');
    expect(request!.url).toBe('/api/v1/campaigns?status=lost&cursor=2026-03-07T09%3A15%3A02.123%2B01%3A00');
    expect(request!.headers.authorization).toBe(`Bearer ${TOKEN}`);
    expect(request!.headers.accept).toBe('application/json');
    expect(request!.headers['user-agent']).toBe(`retention-sdk-node/${SDK_VERSION} node/${process.version}`);
  });

  it('sends through the fetch it is given', async () => {
    const server = await scriptedServer((_req, res) => json(res, 200, emptyList));
    const seen: string[] = [];
    const recording: typeof fetch = (input, init) => {
      seen.push(input instanceof Request ? input.url : input.toString());
      return fetch(input, init);
    };
    await client(server.url, { fetch: recording }).cancelSessions.list({ outcome: 'canceled' });
    expect(seen).toEqual([`${server.url}/api/v1/cancel_sessions?outcome=canceled`]);
    expect(() => client(server.url, { fetch: 'no' as never })).toThrow(/fetch must be a function/);
  });

  it('keeps a base path in front of /api/v1', async () => {
    const server = await scriptedServer((_req, res) => json(res, 200, emptyList));
    await client(`${server.url}/retention/`).customers.list();
    expect(server.requests[0]!.url).toBe('/retention/api/v1/customers');
  });

  it('SDK_VERSION is the package version', () => {
    const manifest = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
      version: string;
    };
    expect(SDK_VERSION).toBe(manifest.version);
  });
});

describe('answers that are not the API JSON', () => {
  it('a gateway error page is retried, then thrown as UnexpectedResponseError with the page excerpt', async () => {
    const server = await scriptedServer((_req, res) => {
      res.writeHead(502, { 'content-type': 'text/html' });
      res.end('<html><body>502 Bad Gateway</body></html>');
    });
    const error = await rejectionOf(client(server.url, { maxRetries: 2 }).stats.retrieve());
    expect(error).toBeInstanceOf(UnexpectedResponseError);
    expect(error).toMatchObject({ type: 'unexpected_response', status: 502, requestId: null });
    expect((error as UnexpectedResponseError).body).toContain('502 Bad Gateway');
    expect(server.requests).toHaveLength(3);
  });

  it('a 503 followed by the answer succeeds', async () => {
    const server = await scriptedServer((_req, res, index) =>
      index === 0 ? json(res, 503, { message: 'maintenance' }) : json(res, 200, emptyList),
    );
    expect(await client(server.url).customers.list()).toEqual(emptyList);
    expect(server.requests).toHaveLength(2);
  });

  it('HTML with 200 (a wrong baseUrl) is not retried', async () => {
    const server = await scriptedServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html', 'request-id': 'req_html' });
      res.end('<!doctype html><title>Login</title>');
    });
    const error = await rejectionOf(client(server.url).stats.retrieve());
    expect(error).toBeInstanceOf(UnexpectedResponseError);
    expect(error).toMatchObject({ status: 200, requestId: 'req_html' });
    expect(error.message).toContain('baseUrl');
    expect(server.requests).toHaveLength(1);
  });

  it.each([['[]'], ['"ok"'], ['null']])(
    'a JSON %s where an object belongs is an UnexpectedResponseError',
    async (body) => {
      const server = await scriptedServer((_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(body);
      });
      expect(await rejectionOf(client(server.url).stats.retrieve())).toBeInstanceOf(UnexpectedResponseError);
    },
  );

  it.each([
    ['{}', {}],
    ['data not an array', { ...emptyList, data: {} }],
    ['has_more not a boolean', { ...emptyList, has_more: 'no' }],
    ['next_cursor not a string', { ...emptyList, has_more: true, next_cursor: 5 }],
    ['another object', { ...emptyList, object: 'customer' }],
  ])('a 200 list that is not the list envelope (%s) is an UnexpectedResponseError, not retried', async (_l, body) => {
    const server = await scriptedServer((_req, res) => json(res, 200, body, { 'request-id': 'req_shape' }));
    const page = await rejectionOf(client(server.url).customers.list());
    expect(page).toBeInstanceOf(UnexpectedResponseError);
    expect(page).toMatchObject({ status: 200, requestId: 'req_shape' });
    expect(page.message).toContain('/api/v1/customers');
    const walk = await rejectionOf(
      (async () => {
        for await (const campaign of client(server.url).campaigns.all()) void campaign;
      })(),
    );
    expect(walk).toBeInstanceOf(UnexpectedResponseError);
    expect(server.requests).toHaveLength(2);
  });

  it('a 200 object of another type than the one retrieved is an UnexpectedResponseError', async () => {
    const server = await scriptedServer((_req, res) => json(res, 200, { ok: true }));
    for (const retrieve of [
      () => client(server.url).stats.retrieve(),
      () => client(server.url).customers.retrieve('6f1c2a52-9d1e-4a8e-b2c4-1f0e2d3c4b5a'),
      () => client(server.url).campaigns.retrieve('6f1c2a52-9d1e-4a8e-b2c4-1f0e2d3c4b5a'),
    ]) {
      const error = await rejectionOf(retrieve());
      expect(error).toBeInstanceOf(UnexpectedResponseError);
      expect(error.message).toContain('but got none');
    }
  });

  it('a redirect is reported, not followed, so the token never travels elsewhere', async () => {
    const elsewhere = await scriptedServer((_req, res) => json(res, 200, emptyList));
    const server = await scriptedServer((_req, res) => {
      res.writeHead(301, { location: `${elsewhere.url}/api/v1/stats` });
      res.end();
    });
    const error = await rejectionOf(client(server.url).stats.retrieve());
    expect(error).toBeInstanceOf(UnexpectedResponseError);
    expect(error.status).toBe(301);
    expect(error.message).toContain(`redirecting to ${elsewhere.url}/api/v1/stats`);
    expect(elsewhere.requests).toHaveLength(0);
  });

  it('an error document of a type this SDK does not know is a plain ApiError with that type', async () => {
    const server = await scriptedServer((_req, res) =>
      json(res, 409, { error: { type: 'conflict', message: 'Not now.' } }, { 'request-id': 'req_x' }),
    );
    const error = await rejectionOf(client(server.url).stats.retrieve());
    expect(error.constructor).toBe(ApiError);
    expect(error).toMatchObject({ type: 'conflict', status: 409, message: 'Not now.', requestId: 'req_x' });
  });

  it('has_more with a next_cursor that does not move back in time stops the iteration instead of looping', async () => {
    // Two cursors taking turns: each differs from the last, but the walk goes nowhere.
    const cursors = ['2026-01-01T00:00:00.000Z', '2026-01-03T00:00:00.000Z'];
    const server = await scriptedServer((_req, res, index) =>
      json(res, 200, { object: 'list', data: [{ id: 'a' }], has_more: true, next_cursor: cursors[index % 2] }),
    );
    const rows: unknown[] = [];
    const error = await rejectionOf(
      (async () => {
        for await (const row of client(server.url).customers.all({ cursor: '2026-01-02T00:00:00.000Z' }))
          rows.push(row);
      })(),
    );
    expect(error).toBeInstanceOf(UnexpectedResponseError);
    expect(server.requests).toHaveLength(2);
    expect(rows).toHaveLength(2);
  });
});

describe('rate limiting, over a longer run of 429s', () => {
  const limited = () =>
    scriptedServer((_req, res) =>
      json(res, 429, { error: { type: 'rate_limit_exceeded', message: 'Retry in 1 second.' } }, { 'retry-after': '1' }),
    );

  it('adds up every wait and stops before the total would pass maxRetryWaitSeconds', async () => {
    const server = await limited();
    const started = Date.now();
    const error = await rejectionOf(client(server.url, { maxRetryWaitSeconds: 2.5 }).stats.retrieve());
    const elapsed = Date.now() - started;
    expect(error).toBeInstanceOf(RateLimitError);
    expect((error as RateLimitError).retryAfterSeconds).toBe(1);
    expect(server.requests).toHaveLength(3);
    expect(elapsed).toBeGreaterThanOrEqual(2_000);
    expect(elapsed).toBeLessThan(2_500);
  });

  it("a gateway's 429 without the API's JSON is waited out for its Retry-After too", async () => {
    const server = await scriptedServer((_req, res, index) => {
      if (index > 0) return json(res, 200, emptyList);
      res.writeHead(429, { 'content-type': 'text/plain', 'retry-after': '1' });
      res.end('Too Many Requests');
    });
    const started = Date.now();
    expect(await client(server.url).customers.list()).toEqual(emptyList);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_000);
    expect(server.requests).toHaveLength(2);
  });

  it("a gateway's 429 asking for more than the budget left is thrown at once, with its Retry-After", async () => {
    const server = await scriptedServer((_req, res) => {
      res.writeHead(429, { 'content-type': 'text/html', 'retry-after': '5' });
      res.end('<html>slow down</html>');
    });
    const started = Date.now();
    const error = await rejectionOf(client(server.url, { maxRetryWaitSeconds: 3 }).stats.retrieve());
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(error).toBeInstanceOf(UnexpectedResponseError);
    expect(error).toMatchObject({ status: 429, retryAfterSeconds: 5 });
    expect(server.requests).toHaveLength(1);
  });

  it('reads Retry-After given as an HTTP date, and waits at least a second when it is missing', async () => {
    const inTwoSeconds = new Date(Date.now() + 2_500).toUTCString();
    const server = await scriptedServer((_req, res, index) =>
      index === 0
        ? json(res, 429, { error: { type: 'rate_limit_exceeded', message: 'slow down' } })
        : json(
            res,
            429,
            { error: { type: 'rate_limit_exceeded', message: 'slow down' } },
            { 'retry-after': inTwoSeconds },
          ),
    );
    const started = Date.now();
    const error = await rejectionOf(client(server.url, { maxRetryWaitSeconds: 1.5 }).stats.retrieve());
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_000);
    expect(server.requests).toHaveLength(2);
    expect((error as RateLimitError).retryAfterSeconds).toBeGreaterThanOrEqual(1);
    expect((error as RateLimitError).retryAfterSeconds).toBeLessThanOrEqual(3);
  });
});

describe('network failures', () => {
  const sockets = new Set<Socket>();
  afterEach(() => {
    for (const socket of sockets) socket.destroy();
  });

  /** A TCP server that does something other than HTTP with each connection. */
  async function tcpServer(
    onConnection: (socket: Socket) => void,
  ): Promise<{ url: string; connections: () => number }> {
    let connections = 0;
    const server = createServer((socket) => {
      connections += 1;
      sockets.add(socket);
      onConnection(socket);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    server.unref();
    return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, connections: () => connections };
  }

  it('a refused connection is a ConnectionError naming the address, retried with back-off', async () => {
    const url = `http://127.0.0.1:${await freePort()}`;
    const started = Date.now();
    const error = await rejectionOf(client(url, { maxRetries: 1 }).stats.retrieve());
    expect(error).toBeInstanceOf(ConnectionError);
    expect(error).toMatchObject({ type: 'connection_error', status: null, requestId: null, timedOut: false });
    expect(error.message).toContain(url);
    expect(error.message).toContain('ECONNREFUSED');
    expect(error.cause).toBeDefined();
    expect(Date.now() - started).toBeGreaterThanOrEqual(250);
  });

  it('a connection reset mid-request is retried, then thrown as a ConnectionError', async () => {
    const server = await tcpServer((socket) => socket.once('data', () => socket.resetAndDestroy()));
    const error = await rejectionOf(client(server.url, { maxRetries: 2 }).stats.retrieve());
    expect(error).toBeInstanceOf(ConnectionError);
    expect(server.connections()).toBe(3);
  });

  it('silence is a ConnectionError with timedOut after timeoutSeconds', async () => {
    const server = await tcpServer(() => undefined);
    const started = Date.now();
    const error = await rejectionOf(client(server.url, { timeoutSeconds: 0.3, maxRetries: 0 }).stats.retrieve());
    const elapsed = Date.now() - started;
    expect(error).toBeInstanceOf(ConnectionError);
    expect((error as ConnectionError).timedOut).toBe(true);
    expect(error.message).toContain('within 0.3 s');
    expect(elapsed).toBeGreaterThanOrEqual(290);
    expect(elapsed).toBeLessThan(2_000);
  });

  it('a body that stops half-way is a timeout too', async () => {
    const server = await scriptedServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"object":"list","data":[');
    });
    const error = await rejectionOf(client(server.url, { timeoutSeconds: 0.3, maxRetries: 0 }).customers.list());
    expect(error).toBeInstanceOf(ConnectionError);
    expect((error as ConnectionError).timedOut).toBe(true);
  });
});
