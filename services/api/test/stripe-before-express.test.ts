import { request, type IncomingHttpHeaders } from 'node:http';
import v8 from 'node:v8';
import { runInNewContext } from 'node:vm';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { connectProcessor, createWorkspace, OPERATOR } from '@retention/domain';
import { eventually, testSecretsKey, useTestDatabase } from '@retention/testkit';
import type { ApiMetrics } from '../src/metrics.js';
import {
  newWebhookSecret,
  signedDelivery,
  stripeCustomer,
  stripeEvent,
} from '../../worker/test/processor/stripe-kit.js';
import { startApiInstance, type ApiInstance } from './api-instance.js';

/**
 * Stripe's events are served before Express (processor/stripe-before-express.ts). These tests
 * hold that door to what the Express route gives: each request goes to the API as it runs
 * (createApiServer, the door in front) and to the same app served by a bare node:http server
 * (Express alone, as before), on one database, and the answers, log lines and metrics must
 * match, down to a wrong method on the path. And the cap on the body: over 1 MiB is a 413
 * without the body ever being held.
 */

const database = useTestDatabase();
const ROUTE = '/processor/stripe/:connection_id';

let api: ApiInstance;
/** The app served by Express alone: what this path was before the door in front of it. */
let expressOnly: ApiInstance;
let connectionId: string;
let secret: string;

beforeAll(async () => {
  api = await startApiInstance({ databaseUrl: database.current.url });
  expressOnly = await startApiInstance({ databaseUrl: database.current.url, expressOnly: true });
  const db = database.current.db;
  const workspace = await createWorkspace(db, { name: 'Door', processor: 'disconnected' });
  secret = newWebhookSecret();
  const connection = await connectProcessor(
    db,
    Buffer.from(testSecretsKey(), 'base64'),
    { workspace_id: workspace.id, provider: 'stripe', webhook_secret: secret },
    'none',
    OPERATOR,
  );
  connectionId = connection.id;
});
afterAll(async () => {
  await api?.close();
  await expressOnly?.close();
});

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
}

/** One raw HTTP request (node:http: any method, any header, a body or none). */
function send(
  base: string,
  path: string,
  options: { method?: string; headers?: Record<string, string>; body?: Buffer | string } = {},
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const outgoing = request(
      `${base}${path}`,
      { method: options.method ?? 'POST', headers: options.headers, agent: false },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () =>
          resolve({ status: response.statusCode!, headers: response.headers, text: Buffer.concat(chunks).toString() }),
        );
      },
    );
    outgoing.on('error', reject);
    outgoing.end(options.body);
  });
}

/** A fresh signed event (so neither server finds the other's event a duplicate). */
function signed(overrides: { timestamp?: number; secret?: string } = {}) {
  const event = stripeEvent('customer.created', stripeCustomer());
  const { body, signature } = signedDelivery(event, overrides.secret ?? secret, overrides.timestamp);
  return { event, body, headers: { 'content-type': 'application/json', 'stripe-signature': signature } };
}

/** What must be the same from both doors: status, body, and every header but the per-request ones. */
function comparable(answer: Answer) {
  const { date: _date, 'request-id': requestId, ...headers } = answer.headers;
  return { status: answer.status, text: answer.text, headers, requestId: /^req_[0-9a-f]{32}$/.test(String(requestId)) };
}

/** The request's log line, once written: when the response is over, which the client may see first. */
const loggedLine = (source: { logs(): Array<Record<string, unknown>> }, requestId: string) =>
  eventually(
    () =>
      source
        .logs()
        .filter((line) => line.requestId === requestId && line.msg?.toString().startsWith('request'))
        .at(-1),
    5_000,
  );

/** A log line without what differs per request or per process. */
const lineShape = (line: Record<string, unknown> | undefined) => {
  if (!line) return line;
  const { time: _time, pid: _pid, hostname: _hostname, requestId: _requestId, durationMs, ...rest } = line;
  return { ...rest, durationMs: typeof durationMs };
};

describe('POST /processor/stripe/:connection_id before Express', () => {
  const cases: Array<
    [
      string,
      (id: string) => { path: string; method?: string; headers?: Record<string, string>; body?: Buffer | string },
    ]
  > = [
    ['an accepted event', (id) => ({ path: `/processor/stripe/${id}`, ...signed() })],
    [
      'the path in capitals, with a trailing slash and a query',
      (id) => ({ path: `/PROCESSOR/Stripe/${id.toUpperCase()}/?x=1`, ...signed() }),
    ],
    ['an unknown connection', () => ({ path: '/processor/stripe/0b8e4a4e-0000-4000-8000-000000000000', ...signed() })],
    ['a connection id that is not a UUID', () => ({ path: '/processor/stripe/not-a-uuid', ...signed() })],
    ['a malformed connection id', () => ({ path: "/processor/stripe/1'%20OR%20'1'='1", ...signed() })],
    [
      'a wrong signing secret',
      (id) => ({ path: `/processor/stripe/${id}`, ...signed({ secret: newWebhookSecret() }) }),
    ],
    [
      'a stale signature',
      (id) => ({ path: `/processor/stripe/${id}`, ...signed({ timestamp: Math.floor(Date.now() / 1000) - 301 }) }),
    ],
    ['no signature', (id) => ({ path: `/processor/stripe/${id}`, body: signed().body })],
    ['no body', (id) => ({ path: `/processor/stripe/${id}`, headers: signed().headers })],
    [
      'a body over 1 MiB',
      (id) => ({ path: `/processor/stripe/${id}`, headers: signed().headers, body: Buffer.alloc(1024 * 1024 + 1, 32) }),
    ],
    [
      'a gzip body (left to Express, which inflates it)',
      (id) => {
        const { body, headers } = signed();
        return {
          path: `/processor/stripe/${id}`,
          headers: { ...headers, 'content-encoding': 'gzip' },
          body: gzipSync(body),
        };
      },
    ],
    [
      'a percent-encoded id (left to Express, which decodes it)',
      (id) => ({ path: `/processor/stripe/%${id.charCodeAt(0).toString(16)}${id.slice(1)}`, ...signed() }),
    ],
    ...['GET', 'HEAD', 'PUT', 'DELETE', 'PATCH', 'OPTIONS'].map(
      (method) =>
        [`a ${method}`, (id: string) => ({ path: `/processor/stripe/${id}`, method })] as [
          string,
          (id: string) => { path: string; method: string },
        ],
    ),
  ];

  it.each(cases)(
    'answers %s as the Express route does, with the same log line and metrics label',
    async (_name, make) => {
      const fromDoor = await send(api.url, make(connectionId).path, make(connectionId));
      const fromExpress = await send(expressOnly.url, make(connectionId).path, make(connectionId));
      expect(comparable(fromDoor)).toEqual(comparable(fromExpress));
      expect(fromDoor.headers['cache-control']).toBe('no-store');
      const doorLine = await loggedLine(api, String(fromDoor.headers['request-id']));
      expect(lineShape(doorLine)).toEqual(
        lineShape(await loggedLine(expressOnly, String(fromExpress.headers['request-id']))),
      );
    },
  );

  it.each(['GET', 'PUT', 'OPTIONS'])(
    'answers a %s with the JSON 404 that says this URL takes only POSTed events',
    async (method) => {
      const answer = await send(api.url, `/processor/stripe/${connectionId}`, { method });
      expect(answer.status).toBe(404);
      expect(answer.headers['content-type']).toMatch(/^application\/json/);
      expect(JSON.parse(answer.text)).toEqual({
        error: {
          type: 'not_found',
          message: `Unrecognized request URL (${method} /processor/stripe/${connectionId}). This URL takes only the events Stripe POSTs to it.`,
        },
      });
    },
  );

  it('keeps a well-formed Request-Id from a proxy (else X-Request-Id), and logs the request under it', async () => {
    const path = `/processor/stripe/${connectionId}?token=whsec_${'x'.repeat(20)}`;
    const kept = await send(api.url, path, {
      ...signed(),
      headers: { ...signed().headers, 'request-id': 'trace-0001.a:b' },
    });
    expect(kept.headers['request-id']).toBe('trace-0001.a:b');
    const fallback = await send(api.url, path, {
      ...signed(),
      headers: { ...signed().headers, 'x-request-id': 'proxy-id-0002' },
    });
    expect(fallback.headers['request-id']).toBe('proxy-id-0002');
    const refused = await send(api.url, path, {
      ...signed(),
      headers: { ...signed().headers, 'request-id': 'bad id' },
    });
    expect(refused.headers['request-id']).toMatch(/^req_[0-9a-f]{32}$/);

    const { body, headers } = signed();
    const accepted = await send(api.url, path, { body, headers: { ...headers, 'request-id': 'trace-0003' } });
    expect(accepted.status).toBe(200);
    const line = await loggedLine(api, 'trace-0003');
    expect(line).toMatchObject({
      level: 'info',
      msg: 'request',
      service: 'api',
      requestId: 'trace-0003',
      method: 'POST',
      path: `/processor/stripe/${connectionId}`, // no query string
      status: 200,
      durationMs: expect.any(Number),
    });
    // Neither the signature header nor the signing secret reaches the log.
    const logged = JSON.stringify(api.logs());
    expect(logged).not.toContain(headers['stripe-signature'].split('v1=')[1]!);
    expect(logged).not.toContain(secret.slice(6));
  });

  it('logs and counts a client that leaves mid-body as aborted (499), as the Express route does', async () => {
    const leave = (base: string, requestId: string, declared: number) =>
      new Promise<void>((resolve) => {
        const outgoing = request(`${base}/processor/stripe/${connectionId}`, {
          method: 'POST',
          headers: { ...signed().headers, 'content-length': String(declared), 'request-id': requestId },
          agent: false,
        });
        outgoing.on('error', () => resolve());
        outgoing.write('{"id":"evt_');
        setTimeout(() => {
          outgoing.destroy();
          resolve();
        }, 50);
      });
    const aborted = async (metrics: ApiMetrics) =>
      (await metrics.requests.get()).values.find(
        (value) => value.labels.method === 'POST' && value.labels.route === ROUTE && value.labels.status === '499',
      )?.value ?? 0;
    const before = { door: await aborted(api.metrics), express: await aborted(expressOnly.metrics) };
    // Within the cap (logged as the 400 for an unreadable body), and declared over it (413).
    for (const [declared, status] of [
      [1000, 400],
      [2 * 1024 * 1024, 413],
    ] as const) {
      await leave(api.url, `leaves-door-${declared}`, declared);
      await leave(expressOnly.url, `leaves-express-${declared}`, declared);
      const doorLine = await loggedLine(api, `leaves-door-${declared}`);
      expect(doorLine).toMatchObject({ level: 'warn', msg: 'request aborted by the client', aborted: true, status });
      expect(lineShape(doorLine)).toEqual(lineShape(await loggedLine(expressOnly, `leaves-express-${declared}`)));
    }
    // The line and the count are written by listeners of the same event: both are in by now.
    expect(await aborted(api.metrics)).toBe(before.door + 2);
    expect(await aborted(expressOnly.metrics)).toBe(before.express + 2);
  });

  it('counts its requests under the route pattern, never the raw id', async () => {
    const count = async (metrics: ApiMetrics, status: string) =>
      (await metrics.requests.get()).values.find(
        (value) => value.labels.method === 'POST' && value.labels.route === ROUTE && value.labels.status === status,
      )?.value ?? 0;
    const before = { ok: await count(api.metrics, '200'), refused: await count(api.metrics, '400') };
    expect((await send(api.url, `/processor/stripe/${connectionId}`, signed())).status).toBe(200);
    const refused = await send(api.url, `/processor/stripe/${connectionId}`, { body: 'x' });
    expect(refused.status).toBe(400);
    await loggedLine(api, String(refused.headers['request-id'])); // counted by the same event's listeners
    expect(await count(api.metrics, '200')).toBe(before.ok + 1);
    expect(await count(api.metrics, '400')).toBe(before.refused + 1);
    const latency = (await api.metrics.latency.get()).values.find(
      (value) => value.metricName === 'http_request_duration_seconds_count' && value.labels.route === ROUTE,
    );
    expect(latency?.value).toBeGreaterThan(0);
    const exposed = await api.metrics.registry.metrics();
    expect(exposed).not.toContain(connectionId);
  });

  it('calls a body over 1 MiB 413 payload_too_large from either door, the type of every 413 of the service', async () => {
    const path = `/processor/stripe/${connectionId}`;
    const over = Buffer.alloc(1024 * 1024 + 1, 32);
    const answers = [
      await send(api.url, path, { headers: signed().headers, body: over }), // the door
      await send(expressOnly.url, path, { headers: signed().headers, body: over }), // Express alone
      // Left to the Express route of the API itself (gzip), over the cap once inflated.
      await send(api.url, path, { headers: { ...signed().headers, 'content-encoding': 'gzip' }, body: gzipSync(over) }),
    ];
    for (const answer of answers) {
      expect(answer.status).toBe(413);
      expect(answer.headers.connection).toBe('close');
      expect(JSON.parse(answer.text)).toEqual({
        error: { type: 'payload_too_large', message: 'The body is larger than 1048576 bytes.' },
      });
    }
  });

  it('refuses a streamed body over 1 MiB with 413 and Connection: close, never holding more than the cap', async () => {
    // 32 MiB sent in chunks with no Content-Length, then a pause: had the server held the body,
    // that much memory would still be in use after a full garbage collection.
    v8.setFlagsFromString('--expose_gc');
    const gc = runInNewContext('gc') as () => void;
    const collected = async () => {
      for (let round = 0; round < 2; round += 1) {
        await new Promise((resolve) => setTimeout(resolve, 20));
        gc();
      }
      return process.memoryUsage().arrayBuffers;
    };
    const chunk = Buffer.alloc(64 * 1024, 120);
    const before = await collected();
    let held = Infinity;
    const answer = await new Promise<Answer>((resolve, reject) => {
      const outgoing = request(
        `${api.url}/processor/stripe/${connectionId}`,
        { method: 'POST', headers: { ...signed().headers, 'transfer-encoding': 'chunked' }, agent: false },
        (response) => {
          const chunks: Buffer[] = [];
          response.on('data', (data: Buffer) => chunks.push(data));
          response.on('end', () =>
            resolve({
              status: response.statusCode!,
              headers: response.headers,
              text: Buffer.concat(chunks).toString(),
            }),
          );
        },
      );
      outgoing.on('error', reject);
      const write = async (bytes: number) => {
        for (let sent = 0; sent < bytes; sent += chunk.length) {
          if (!outgoing.write(chunk)) await new Promise((resolve) => outgoing.once('drain', resolve));
        }
      };
      void (async () => {
        await write(32 * 1024 * 1024);
        await new Promise((resolve) => setTimeout(resolve, 300)); // the server reads what the socket holds
        held = (await collected()) - before;
        await write(1024 * 1024);
        outgoing.end();
      })().catch(reject);
    });
    expect(answer.status).toBe(413);
    expect(answer.headers.connection).toBe('close');
    expect(answer.headers['cache-control']).toBe('no-store');
    expect(answer.headers['request-id']).toMatch(/^req_[0-9a-f]{32}$/);
    expect(JSON.parse(answer.text)).toEqual({
      error: { type: 'payload_too_large', message: 'The body is larger than 1048576 bytes.' },
    });
    expect(held).toBeLessThan(8 * 1024 * 1024);
    expect(await loggedLine(api, String(answer.headers['request-id']))).toMatchObject({ status: 413, method: 'POST' });
  });

  it('answers each event of a batch on its own: one Postgres refuses fails alone, the others sent with it are stored', async () => {
    const path = `/processor/stripe/${connectionId}`;
    const db = database.current.db;
    const post = ({ headers, body }: { headers: Record<string, string>; body: string | Buffer }) =>
      send(api.url, path, { headers, body });
    const first = signed();
    expect((await post(first)).status).toBe(200);
    // Connected by that first event, as the API's connection cache sees it a second later
    // (a pending connection's events are stored one by one, as they may connect it).
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    // An event Postgres refuses (Stripe retries it; it is answered 500): a constraint of this
    // test's own refuses its id.
    const refused = signed();
    await db.raw(
      `ALTER TABLE processor_events ADD CONSTRAINT refuses_one_event CHECK (psp_event_id <> '${refused.event.id}') NOT VALID`,
    );
    // One INSERT runs at a time: hold one up on a row lock, so that the next events wait and go
    // together in one batch.
    const held = signed();
    const blocker = await db.transaction();
    await blocker('processor_events').insert({
      connection_id: connectionId,
      workspace_id: (await db('processor_connections').where({ id: connectionId }).first()).workspace_id,
      psp_event_id: held.event.id,
      type: held.event.type,
      psp_created_at: new Date(),
      payload: JSON.stringify(held.event),
    });
    const heldAnswer = post(held);
    await new Promise((resolve) => setTimeout(resolve, 200));
    const good = Array.from({ length: 30 }, () => signed());
    const answers = Promise.all([...good.slice(0, 15).map(post), post(refused), ...good.slice(15).map(post)]);
    await new Promise((resolve) => setTimeout(resolve, 200));
    await blocker.rollback();
    expect((await heldAnswer).status).toBe(200);
    const statuses = (await answers).map((answer) => answer.status);
    expect(statuses).toEqual([...Array(15).fill(200), 500, ...Array(15).fill(200)]);
    expect(JSON.parse((await answers)[15]!.text).error.type).toBe('database_error');
    const [stored] = await db('processor_events')
      .whereIn(
        'psp_event_id',
        good.map(({ event }) => event.id),
      )
      .count({ count: '*' });
    expect(Number(stored?.count)).toBe(30);
    await db.raw('ALTER TABLE processor_events DROP CONSTRAINT refuses_one_event');
  });
});
