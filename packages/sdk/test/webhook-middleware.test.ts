import { createServer, request as httpRequest, type RequestListener } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from '@jest/globals';
import express, { type ErrorRequestHandler } from 'express';
import { serializeWebhookPayload, signatureHeader } from '@retention/core';
import { webhookEventOf, webhookMiddleware, type WebhookEvent, type WebhookRefusal } from '@retention/sdk';

const SECRET = 'whsec_middlewareTestSecret000000000000000000';
const now = () => Math.floor(Date.now() / 1000);

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});

async function listen(listener: RequestListener): Promise<string> {
  const server = createServer(listener);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

function signed(body: string, timestamp = now(), secret = SECRET): RequestInit {
  return {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-service-signature': signatureHeader(secret, timestamp, body) },
    body,
  };
}

const pingBody = serializeWebhookPayload('ping', '2026-03-07T09:15:02.123Z', { test: true });
const recoveredBody = serializeWebhookPayload('recovery.recovered', '2026-03-07T09:15:02.123Z', {
  campaign_id: '6f1c2a52-9d1e-4a8e-b2c4-1f0e2d3c4b5a',
  customer_email: 'ann@example.com',
  amount_cents: 4900,
  currency: 'usd',
  recovered_via: 'retry',
});

/** A plain node:http receiver using the middleware; it records the events handed on. */
async function nodeReceiver(options: Partial<Parameters<typeof webhookMiddleware>[0]> = {}) {
  const verify = webhookMiddleware({ secret: SECRET, ...options });
  const received: WebhookEvent[] = [];
  const url = await listen((req, res) =>
    verify(req, res, (error) => {
      if (error) {
        res.statusCode = 500;
        res.end(error instanceof Error ? error.message : 'failed');
        return;
      }
      received.push(webhookEventOf(req));
      res.end('ok');
    }),
  );
  return { url, received };
}

async function post(url: string, init: RequestInit) {
  const response = await fetch(url, init);
  const text = await response.text();
  return { status: response.status, text, json: text.startsWith('{') ? JSON.parse(text) : undefined };
}

describe('webhookMiddleware on node:http', () => {
  it('hands a verified event on, typed, and answers whatever the handler answers', async () => {
    const receiver = await nodeReceiver();
    const response = await post(receiver.url, signed(recoveredBody));
    expect(response).toMatchObject({ status: 200, text: 'ok' });
    expect(receiver.received).toEqual([JSON.parse(recoveredBody)]);
  });

  it.each([
    [
      'a tampered body',
      () => ({ ...signed(recoveredBody), body: recoveredBody.replace('4900', '1') }),
      'signature_mismatch',
    ],
    ['another secret', () => signed(recoveredBody, now(), 'whsec_other'), 'signature_mismatch'],
    ['a stale timestamp', () => signed(recoveredBody, now() - 600), 'timestamp_out_of_tolerance'],
    ['a future timestamp', () => signed(recoveredBody, now() + 600), 'timestamp_out_of_tolerance'],
    ['no signature header', () => ({ method: 'POST', body: recoveredBody }), 'malformed_header'],
    [
      'a malformed header',
      () => ({ method: 'POST', body: recoveredBody, headers: { 'x-service-signature': 'v1=abc' } }),
      'malformed_header',
    ],
  ])(
    'answers 401 to %s, with the reason, tells onRefused why, and never calls the handler',
    async (_label, init, type) => {
      const refusals: Array<{ refusal: WebhookRefusal; path: string | undefined }> = [];
      const receiver = await nodeReceiver({ onRefused: (refusal, req) => refusals.push({ refusal, path: req.url }) });
      const response = await post(`${receiver.url}/hooks`, init());
      expect(response.status).toBe(401);
      expect(response.json).toEqual({ error: { type, message: expect.any(String) } });
      expect(response.text).not.toContain(SECRET);
      expect(receiver.received).toEqual([]);
      // What was answered, for the receiver's own log: a 401 alone does not say why.
      expect(refusals).toEqual([{ refusal: { status: 401, ...response.json.error }, path: '/hooks' }]);
    },
  );

  it('answers 400 to a correctly signed body that is not an event', async () => {
    const refusals: WebhookRefusal[] = [];
    const receiver = await nodeReceiver({ onRefused: (refusal) => refusals.push(refusal) });
    const response = await post(receiver.url, signed('{"hello":"world"}'));
    expect(response.status).toBe(400);
    expect(response.json.error.type).toBe('invalid_payload');
    expect(refusals).toEqual([{ status: 400, ...response.json.error }]);
  });

  it('refuses a body over maxBodyBytes with 413, declared or streamed, without buffering it', async () => {
    const refusals: WebhookRefusal[] = [];
    const receiver = await nodeReceiver({ maxBodyBytes: 1024, onRefused: (refusal) => refusals.push(refusal) });
    const big = JSON.stringify({ type: 'ping', created_at: 'x', data: { pad: 'x'.repeat(5_000) } });
    const declared = await post(receiver.url, signed(big));
    expect(declared.status).toBe(413);
    expect(declared.json.error.type).toBe('payload_too_large');
    expect(refusals).toEqual([{ status: 413, ...declared.json.error }]);

    // Chunked: no Content-Length, so the limit is found while reading.
    const streamed = await new Promise<number>((resolve, reject) => {
      const request = httpRequest(`${receiver.url}/`, {
        method: 'POST',
        headers: { 'x-service-signature': signatureHeader(SECRET, now(), big) },
      });
      request.on('response', (response) => {
        response.resume();
        resolve(response.statusCode!);
      });
      request.on('error', reject);
      request.write(big.slice(0, 600));
      setTimeout(() => request.end(big.slice(600)), 20);
    });
    expect(streamed).toBe(413);
    expect(receiver.received).toEqual([]);
    // Within the limit, the same receiver accepts.
    expect((await post(receiver.url, signed(pingBody))).status).toBe(200);
  });

  it('takes another tolerance', async () => {
    const receiver = await nodeReceiver({ toleranceSeconds: 5 });
    expect((await post(receiver.url, signed(pingBody, now() - 30))).status).toBe(401);
    expect((await post(receiver.url, signed(pingBody, now() - 1))).status).toBe(200);
  });

  it('refuses a missing secret when it is set up, not on the first delivery', () => {
    expect(() => webhookMiddleware({ secret: '' })).toThrow(/signing secret/);
    expect(() => webhookMiddleware({ secret: SECRET, maxBodyBytes: 0 })).toThrow(/maxBodyBytes/);
  });
});

describe('webhookMiddleware in Express', () => {
  async function app(setUp: (application: express.Express) => void) {
    const application = express();
    const failures: unknown[] = [];
    setUp(application);
    application.post('/webhooks', webhookMiddleware({ secret: SECRET }), (req, res) => {
      const event = webhookEventOf(req);
      res.json({ received: event.type });
    });
    const recordFailure: ErrorRequestHandler = (error, _req, res, _next) => {
      failures.push(error);
      res.status(500).json({ error: 'misconfigured' });
    };
    application.use(recordFailure);
    return { url: `${await listen(application)}/webhooks`, failures };
  }

  it('works as route middleware', async () => {
    const { url } = await app(() => undefined);
    const response = await post(url, signed(recoveredBody));
    expect(response).toMatchObject({ status: 200, json: { received: 'recovery.recovered' } });
    expect((await post(url, signed(recoveredBody, now() - 900))).status).toBe(401);
  });

  it('works after express.raw(), using the bytes it read', async () => {
    const { url } = await app((application) => application.use(express.raw({ type: 'application/json' })));
    expect((await post(url, signed(pingBody))).json).toEqual({ received: 'ping' });
  });

  it('after express.json({ verify }) keeping the bytes as req.rawBody, verifies those bytes', async () => {
    const { url, failures } = await app((application) =>
      application.use(
        express.json({
          verify: (req, _res, buf) => Object.assign(req, { rawBody: buf }),
        }),
      ),
    );
    const good = await post(url, signed(recoveredBody));
    expect(good).toMatchObject({ status: 200, json: { received: 'recovery.recovered' } });
    const forged = await post(url, { ...signed(recoveredBody), body: recoveredBody.replace('4900', '1') });
    expect(forged).toMatchObject({ status: 401, json: { error: { type: 'signature_mismatch' } } });
    const stale = await post(url, signed(recoveredBody, now() - 900));
    expect(stale).toMatchObject({ status: 401, json: { error: { type: 'timestamp_out_of_tolerance' } } });
    expect(failures).toEqual([]);
  });

  it('takes req.rawBody as a string too, as a host that parsed the body may set it', async () => {
    const { url } = await app((application) =>
      application.use(express.text({ type: 'application/json' }), (req, _res, next) => {
        Object.assign(req, { rawBody: req.body as string, body: JSON.parse(req.body as string) as unknown });
        next();
      }),
    );
    expect((await post(url, signed(pingBody))).json).toEqual({ received: 'ping' });
    expect((await post(url, signed(pingBody, now() - 900))).status).toBe(401);
  });

  it('hands a body parsed with no raw bytes kept to the error handler, naming the fixes', async () => {
    const { url, failures } = await app((application) => application.use(express.json()));
    expect((await post(url, signed(pingBody))).status).toBe(500);
    expect(failures).toHaveLength(1);
    expect(String(failures[0])).toContain('raw bytes were not kept');
    expect(String(failures[0])).toContain('req.rawBody = buf');
  });

  it('webhookEventOf fails loudly when the middleware did not run', async () => {
    const application = express();
    application.post('/bare', (req, res) => {
      try {
        webhookEventOf(req);
        res.send('unexpected');
      } catch (error) {
        res.status(500).send((error as Error).message);
      }
    });
    const response = await post(`${await listen(application)}/bare`, signed(pingBody));
    expect(response.text).toContain('mount webhookMiddleware()');
  });
});
