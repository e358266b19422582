import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import ajv2020Module from 'ajv/dist/2020.js';
import ajvFormatsModule from 'ajv-formats';
import type { Express } from 'express';
import { Validator } from '@seriousme/openapi-schema-validator';
import {
  buildEventData,
  ERROR_STATUS,
  EVENT_TYPES,
  PING_DATA,
  PING_EVENT_TYPE,
  serializeWebhookPayload,
  signatureHeader,
  SIGNATURE_HEADER,
  toIsoMillis,
  type EventType,
} from '@retention/core';
import { loadFixtures } from '@retention/domain';
import { startApiInstance, useApiInstance, type ApiInstance, type Reply } from './api-instance.js';
import { withUnconnectedApp } from './unconnected-app.js';
import { testSecretsKeyBytes } from '@retention/testkit';

const Ajv2020 = ajv2020Module.default;
const addFormats = ajvFormatsModule.default;

const instance = useApiInstance({ baseUrl: 'https://retention.example.com' });

/** Spec part 7: every error type of the API with its status. */
const SPEC_ERRORS: Record<string, number> = {
  authentication_required: 401,
  invalid_token: 401,
  invalid_param: 400,
  not_found: 404,
  rate_limit_exceeded: 429,
  database_error: 500,
};

let document: any;
beforeAll(async () => {
  const reply = await instance.api.get('/openapi.json');
  expect(reply.status).toBe(200);
  document = reply.body;
});

/** Every route Express would serve, read from the app's own router stack. */
function routesOf(app: Express): Array<{ method: string; path: string }> {
  const routes: Array<{ method: string; path: string }> = [];
  const walk = (stack: any[], prefix: string) => {
    for (const layer of stack) {
      if (layer.route) {
        for (const method of Object.keys(layer.route.methods)) routes.push({ method, path: prefix + layer.route.path });
      } else if (Array.isArray(layer.handle?.stack)) {
        walk(layer.handle.stack, prefix + (layer.rawPath === '/' ? '' : String(layer.rawPath)));
      }
    }
  };
  walk((app as any).router.stack, '');
  return routes;
}

const toOpenApiPath = (path: string) => path.replace(/:([A-Za-z0-9_]+)/g, '{$1}');

/** The operations of the document, with their responses resolved. */
function operations(): Array<{ path: string; method: string; operation: any }> {
  return Object.entries(document.paths).flatMap(([path, methods]: [string, any]) =>
    Object.entries(methods).map(([method, operation]) => ({ path, method, operation })),
  );
}

function resolveResponse(response: any): any {
  if (!response.$ref) return response;
  const name = String(response.$ref).replace('#/components/responses/', '');
  return document.components.responses[name];
}

function resolveHeader(header: any): any {
  return header.$ref ? document.components.headers[String(header.$ref).replace('#/components/headers/', '')] : header;
}

describe('the OpenAPI document', () => {
  it('describes exactly the routes the app serves under /api/v1, with their methods', async () => {
    let routes: Array<{ method: string; path: string }> = [];
    await withUnconnectedApp((app) => (routes = routesOf(app)));
    const served = routes
      .filter((route) => route.path.startsWith('/api/v1/'))
      .map((route) => `${route.method} ${toOpenApiPath(route.path)}`)
      .sort();
    const documented = operations()
      .map(({ path, method }) => `${method} ${path}`)
      .sort();
    expect(served.length).toBe(6);
    expect(documented).toEqual(served);
    // Outside /api/v1 the app serves only liveness, the documentation, the Stripe webhook
    // receiver (docs/processor.md: signed by Stripe, not part of the API) and the dashboard
    // (docs/dashboard-api.md), which `/` redirects to, and its icon where browsers ask for it;
    // readiness and metrics are on the internal port.
    // (Paths once each: the Stripe path has its POST and an answer for every other method.)
    expect(
      [
        ...new Set(
          routes
            .filter((route) => !route.path.startsWith('/api/v1/') && !route.path.startsWith('/dashboard/'))
            .map((route) => route.path),
        ),
      ].sort(),
    ).toEqual(['/', '/docs', '/favicon.ico', '/healthz', '/openapi.json', '/processor/stripe/:connection_id']);
  });

  it('is valid OpenAPI 3.1', async () => {
    const result = await new Validator().validate(structuredClone(document));
    expect(result.errors).toBeUndefined();
    expect(result.valid).toBe(true);
    expect(document.openapi).toBe('3.1.0');
    expect(document.servers).toEqual([{ url: 'https://retention.example.com' }]);
  });

  it('holds only valid JSON Schema 2020-12, without keywords private to our validator', () => {
    const ajv = strictAjv();
    for (const name of Object.keys(document.components.schemas)) {
      expect(() => ajv.getSchema(`openapi.json#/components/schemas/${name}`)).not.toThrow();
    }
    for (const { operation } of operations()) {
      for (const parameter of operation.parameters) expect(() => ajv.compile(parameter.schema)).not.toThrow();
    }
    expect(JSON.stringify(document)).not.toContain('errorMessage');
  });

  it('describes on every operation the errors of spec part 7 it can answer, with the right status', () => {
    const seen = new Set<string>();
    for (const { path, operation } of operations()) {
      const expected = ['authentication_required', 'invalid_token', 'invalid_param', 'rate_limit_exceeded'];
      expected.push('database_error');
      if (path.includes('{id}')) expected.push('not_found');
      const described: string[] = [];
      for (const [status, entry] of Object.entries(operation.responses)) {
        if (status === '200') continue;
        const response = resolveResponse(entry);
        const types: string[] = response.content['application/json'].schema.properties.error.properties.type.enum;
        for (const type of types) {
          expect(SPEC_ERRORS[type]).toBe(Number(status));
          expect(response.description).toContain(`\`${type}\``);
          described.push(type);
          seen.add(type);
        }
      }
      expect(described.sort()).toEqual(expected.sort());
    }
    expect([...seen].sort()).toEqual(Object.keys(SPEC_ERRORS).sort());
    for (const [type, status] of Object.entries(SPEC_ERRORS)) expect(ERROR_STATUS[type as 'not_found']).toBe(status);
  });

  it('documents Request-Id, Retention-Api-Version and the X-RateLimit-* headers on every response, and Retry-After on 429', () => {
    for (const { operation } of operations()) {
      for (const [status, entry] of Object.entries(operation.responses)) {
        const headers = Object.keys(resolveResponse(entry).headers).sort();
        const expected = [
          'Request-Id',
          'Retention-Api-Version',
          'X-RateLimit-Limit',
          'X-RateLimit-Remaining',
          'X-RateLimit-Reset',
        ];
        if (status === '429') expected.push('Retry-After');
        expect(headers).toEqual(expected.sort());
      }
    }
  });

  it('describes the refusals of several Authorization headers and of malformed percent-encoding', () => {
    expect(document.components.responses.Unauthorized.description).toContain('more than one `Authorization` header');
    expect(document.components.responses.BadRequest.description).toContain(
      'percent-encoding is malformed or not UTF-8',
    );
  });

  it('describes query parameters with the schemas that validate them', () => {
    const campaigns = document.paths['/api/v1/campaigns'].get;
    const status = campaigns.parameters.find((parameter: any) => parameter.name === 'status');
    expect(status).toMatchObject({ in: 'query', required: false });
    expect(status.schema.enum).toEqual(['in_flight', 'recovered', 'lost', 'abandoned']);
    const sessions = document.paths['/api/v1/cancel_sessions'].get;
    expect(sessions.parameters.map((parameter: any) => parameter.name).sort()).toEqual(['cursor', 'outcome']);
    const customer = document.paths['/api/v1/customers/{id}'].get;
    expect(customer.parameters).toEqual([
      expect.objectContaining({
        name: 'id',
        in: 'path',
        required: true,
        schema: expect.objectContaining({ format: 'uuid' }),
      }),
    ]);
    expect(document.paths['/api/v1/stats'].get.parameters).toEqual([]);
  });
});

describe('the webhooks of the OpenAPI document', () => {
  /** Every type a delivery can carry: core's catalog, and the dashboard's Send test. */
  const deliveryTypes = [...EVENT_TYPES, PING_EVENT_TYPE];

  /** A delivery body as the worker writes it: the sender's envelope around data core accepts. */
  function deliveryBody(type: string): Record<string, any> {
    const example = document.webhooks[type].post.requestBody.content['application/json'].example;
    const data = type === PING_EVENT_TYPE ? PING_DATA : buildEventData(type as EventType, example.data);
    return JSON.parse(serializeWebhookPayload(type, toIsoMillis(new Date()), data));
  }

  const bodyValidator = (ajv: ReturnType<typeof strictAjv>, type: string) =>
    ajv.getSchema(`openapi.json#/webhooks/${type}/post/requestBody/content/application~1json/schema`)!;

  it('has one POST per event type of the service’s catalog, and one for Send test’s ping', () => {
    expect(Object.keys(document.webhooks).sort()).toEqual([...deliveryTypes].sort());
    for (const type of deliveryTypes) expect(Object.keys(document.webhooks[type])).toEqual(['post']);
    expect(document.tags.map((tag: any) => tag.name)).toContain('Webhooks');
  });

  it('signs with the header the sender sets, and states the answers a receiver gives', () => {
    const ajv = strictAjv();
    const body = serializeWebhookPayload('reactivation.sent', '2026-11-25T07:55:02.123Z', {});
    for (const type of deliveryTypes) {
      const post = document.webhooks[type].post;
      expect(post.security).toEqual([]);
      const signature = post.parameters.find((parameter: any) => parameter.name === SIGNATURE_HEADER);
      expect(signature).toMatchObject({ in: 'header', required: true });
      expect(SIGNATURE_HEADER).toBe('X-Service-Signature');
      const validate = ajv.compile(signature.schema);
      // One secret, and two during a roll's overlap, as the sender writes them.
      expect(validate(signatureHeader('whsec_a', 1_764_057_302, body))).toBe(true);
      expect(validate(signatureHeader(['whsec_a', 'whsec_b'], 1_764_057_302, body))).toBe(true);
      expect(validate('t=1764057302,v1=sha256:abc')).toBe(false);
      const agent = post.parameters.find((parameter: any) => parameter.name === 'User-Agent');
      expect(agent.schema.const).toBe('Service-Webhooks/1 (+https://retention.example.com)');
      expect(Object.keys(post.responses).sort()).toEqual(['2XX', '401', 'default']);
      expect(post.responses.default.description).toMatch(/retried, up to 10 attempts/);
    }
    const tag = document.tags.find((candidate: any) => candidate.name === 'Webhooks');
    expect(tag.description).toContain('5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h, 24 h');
    expect(tag.description).toContain('10 failed attempts in a row');
  });

  it('describes each body with a schema that accepts a real delivery body of its type', () => {
    const ajv = strictAjv();
    for (const type of deliveryTypes) {
      const body = deliveryBody(type);
      const validate = bodyValidator(ajv, type);
      if (!validate(body)) throw new Error(`${type}: ${ajv.errorsText(validate.errors)}`);
      // The schema's envelope is the sender's: the keys serializeWebhookPayload writes, all required.
      const schema = document.webhooks[type].post.requestBody.content['application/json'].schema;
      expect(Object.keys(schema.properties)).toEqual(Object.keys(body));
      expect([...schema.required].sort()).toEqual(Object.keys(body).sort());
    }
  });

  it('rejects a body missing any required field, or of another type', () => {
    const ajv = strictAjv();
    let checked = 0;
    for (const type of deliveryTypes) {
      const body = deliveryBody(type);
      const validate = bodyValidator(ajv, type);
      for (const key of Object.keys(body)) {
        const { [key]: _dropped, ...without } = body;
        expect({ type, without: key, valid: validate(without) }).toEqual({ type, without: key, valid: false });
        checked += 1;
      }
      for (const key of Object.keys(body.data)) {
        const { [key]: _dropped, ...data } = body.data;
        const optional = type === 'recovery.lost' && (key === 'reason' || key === 'source');
        expect({ type, without: key, valid: validate({ ...body, data }) }).toEqual({
          type,
          without: key,
          valid: optional,
        });
        checked += 1;
      }
      const other = type === 'ping' ? 'recovery.opened' : 'ping';
      expect(validate({ ...body, type: other })).toBe(false);
    }
    expect(checked).toBeGreaterThan(deliveryTypes.length * 4);
  });
});

describe('real responses of the running API', () => {
  let ajv: ReturnType<typeof strictAjv>;
  let token: string;
  let revokedToken: string;
  const limitedTokens: Record<string, string> = {};
  let ids: { customer: string; campaign: string };
  let failingApi: ApiInstance;
  /** `operationId status type`, for every response that was validated. */
  const checked = new Set<string>();

  beforeAll(async () => {
    ajv = strictAjv();
    const result = await loadFixtures(instance.database.db, testSecretsKeyBytes(), {
      workspaces: [
        {
          key: 'w',
          tokens: [
            { key: 'main', rate_limit: 100_000 },
            { key: 'revoked', revoked: true },
            ...operations().map(({ operation }) => ({ key: operation.operationId, rate_limit: 1 })),
          ],
          customers: [
            {
              key: 'ann',
              email: 'ann@example.com',
              name: 'Ann',
              tags: ['vip'],
              subscriptions: [
                { key: 'pro', status: 'past_due' },
                { key: 'old', status: 'canceled' },
              ],
            },
            { key: 'bob', subscriptions: [{ key: 'bob-sub', currency: 'eur', amount_cents: 1900 }] },
          ],
          campaigns: [
            { key: 'open', customer: 'ann', subscription: 'pro', decline_code: 'insufficient_funds' },
            { key: 'won', customer: 'bob', status: 'recovered', closed_at: '2026-03-02T00:00:00Z' },
          ],
          cancel_sessions: [
            { key: 's1', customer: 'ann', subscription: 'old', outcome: 'saved_discount', feedback: 'pricey' },
            { key: 's2', customer: 'bob', outcome: 'canceled' },
          ],
        },
      ],
    });
    const workspace = result.workspaces.w!;
    token = workspace.tokens.main!.token;
    revokedToken = workspace.tokens.revoked!.token;
    for (const { operation } of operations())
      limitedTokens[operation.operationId] = workspace.tokens[operation.operationId]!.token;
    ids = { customer: workspace.customers.ann!, campaign: workspace.campaigns.open! };
    failingApi = await startApiInstance({ databaseUrl: 'postgres://postgres:postgres@127.0.0.1:1/nowhere' });
  });

  afterAll(async () => {
    await failingApi?.close();
  });

  const concretePath = (path: string) =>
    path.replace('{id}', path.startsWith('/api/v1/customers') ? ids.customer : ids.campaign);

  /** Checks the reply against the operation's documented response for its status. */
  function expectDocumented(operation: any, reply: Reply): void {
    const entry = operation.responses[String(reply.status)];
    if (!entry) throw new Error(`${operation.operationId} answered an undocumented ${reply.status}: ${reply.text}`);
    const pointer = entry.$ref
      ? `openapi.json${String(entry.$ref)}/content/application~1json/schema`
      : `openapi.json#/paths/${operationPointer(operation)}/responses/${reply.status}/content/application~1json/schema`;
    const validate = ajv.getSchema(pointer)!;
    if (!validate(reply.body)) {
      throw new Error(`${operation.operationId} ${reply.status}: ${ajv.errorsText(validate.errors)}\n${reply.text}`);
    }
    expect(reply.headers.get('content-type')).toMatch(/^application\/json/);
    for (const [name, header] of Object.entries(resolveResponse(entry).headers)) {
      const { required, schema } = resolveHeader(header);
      const value = reply.headers.get(name);
      if (value === null) {
        // Only a request that failed before it could be counted goes without the rate-limit headers.
        expect({ name, required, status: reply.status }).toEqual({ name, required: false, status: 500 });
        continue;
      }
      const typed = schema.type === 'integer' ? (/^\d+$/.test(value) ? Number(value) : value) : value;
      expect(ajv.validate(schema, typed)).toBe(true);
    }
    checked.add(`${operation.operationId} ${reply.status} ${reply.status === 200 ? 'ok' : reply.body.error.type}`);
  }

  function operationPointer(operation: any): string {
    const found = operations().find((candidate) => candidate.operation.operationId === operation.operationId)!;
    return `${found.path.replaceAll('~', '~0').replaceAll('/', '~1')}/${found.method}`;
  }

  it('every success and every documented error validates against the document', async () => {
    for (const { path, operation } of operations()) {
      const url = concretePath(path);
      expectDocumented(operation, await instance.api.get(url, token));
      if (path.includes('{id}'))
        expectDocumented(operation, await instance.api.get(path.replace('{id}', randomUUID()), token));
      else expectDocumented(operation, await instance.api.get(`${url}?cursor=2020-01-01`, token));

      expectDocumented(operation, await instance.api.get(url));
      expectDocumented(operation, await instance.api.get(url, 'not-a-token'));
      expectDocumented(operation, await instance.api.get(url, revokedToken));
      expectDocumented(operation, await instance.api.get(`${url}?unknown=1`, token));
      if (path.includes('{id}'))
        expectDocumented(operation, await instance.api.get(path.replace('{id}', 'nope'), token));

      const limited = limitedTokens[operation.operationId]!;
      expectDocumented(operation, await instance.api.get(url, limited));
      const refused = await instance.api.get(url, limited);
      expect(refused.status).toBe(429);
      expectDocumented(operation, refused);

      const failed = await failingApi.get(url, token);
      expect(failed.status).toBe(500);
      expectDocumented(operation, failed);
    }

    const expected = operations().flatMap(({ path, operation }) => [
      `${operation.operationId} 200 ok`,
      `${operation.operationId} 400 invalid_param`,
      `${operation.operationId} 401 authentication_required`,
      `${operation.operationId} 401 invalid_token`,
      `${operation.operationId} 429 rate_limit_exceeded`,
      `${operation.operationId} 500 database_error`,
      ...(path.includes('{id}') ? [`${operation.operationId} 404 not_found`] : []),
    ]);
    expect([...checked].sort()).toEqual(expected.sort());
  }, 60_000);

  it('describes the cursor in standard JSON Schema that accepts exactly what the API accepts', async () => {
    const ajv = strictAjv();
    const samples = [
      '2026-03-07T09:15:02Z',
      '2026-03-07t09:15:02.123456z',
      '2026-03-07T09:15:02+01:00',
      '2026-03-07T09:15:02.1-05:30',
      '2024-02-29',
      '2026-03-07',
      'yesterday',
      '1700000000',
      '2026-02-30',
      '2026-13-01',
      '2026-02-30T00:00:00Z',
      '2026-03-07T24:00:00Z',
      '2026-03-07T23:59:60Z',
      '2026-03-07T09:15Z',
      '2026-03-07 09:15:02Z',
      '2026-03-07T09:15:02',
      '2026-03-07T09:15:02.Z',
      '2026-03-07T09:15:02+0100',
      '+2026-03-07',
      '2026-03-07T09:15:02+24:00',
      '2026-03-07T09:15:02-05:60',
      '2026-03-07T09:60:02Z',
    ];
    for (const { path, operation } of operations()) {
      const cursor = operation.parameters.find((parameter: any) => parameter.name === 'cursor');
      if (!cursor) continue;
      const validate = ajv.compile(cursor.schema);
      for (const sample of samples) {
        const reply = await instance.api.get(`${path}?cursor=${encodeURIComponent(sample)}`, token);
        expect({ path, sample, documented: validate(sample) }).toEqual({
          path,
          sample,
          documented: reply.status === 200,
        });
      }
    }
  });

  it('lets a response gain fields (the API is extended on request): no schema closes its properties', async () => {
    const closed: string[] = [];
    const walk = (node: unknown, at: string) => {
      if (Array.isArray(node)) node.forEach((item, index) => walk(item, `${at}/${index}`));
      else if (typeof node === 'object' && node !== null) {
        for (const [key, value] of Object.entries(node)) {
          if (key === 'additionalProperties' && value === false) closed.push(at);
          walk(value, `${at}/${key}`);
        }
      }
    };
    walk(document, '#');
    expect(closed).toEqual([]);
    // A client generated from the document keeps accepting a list whose rows grew a field.
    const reply = await instance.api.get('/api/v1/campaigns', token);
    const grown = { ...reply.body, added: 1, data: reply.body.data.map((row: object) => ({ ...row, added: 1 })) };
    const validate = strictAjv().getSchema('openapi.json#/components/schemas/RecoveryCampaignList')!;
    expect(validate(grown)).toBe(true);
  });

  it('rejects a body that breaks the documented schema (the check can fail)', async () => {
    const reply = await instance.api.get('/api/v1/campaigns', token);
    const broken = { ...reply, body: { ...reply.body, data: [{ ...reply.body.data[0], status: 'bogus' }] } };
    expect(() => expectDocumented(document.paths['/api/v1/campaigns'].get, broken)).toThrow(/status/);
  });
});

/** Ajv for JSON Schema 2020-12 in strict mode, holding the document as `openapi.json`. */
function strictAjv() {
  const ajv = new Ajv2020({ strict: true, strictTypes: false, allErrors: true });
  addFormats(ajv);
  // No format of our own is declared: strict mode refuses a schema naming one the standard lacks.
  // The document's own fields are not schema keywords: declare them so strict mode allows the root.
  for (const keyword of ['openapi', 'info', 'servers', 'security', 'tags', 'paths', 'webhooks', 'components'])
    ajv.addKeyword(keyword);
  ajv.addSchema(document, 'openapi.json');
  return ajv;
}
