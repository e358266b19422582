import { beforeAll, describe, expect, it } from '@jest/globals';
import {
  InvalidParamError,
  NotFoundError,
  type CampaignStatus,
  type CancelOutcome,
  type Client,
  type RetentionError,
} from '@retention/sdk';
import { rejectionOf } from './client-helpers.js';
import { useApi, workspaceWithToken } from './harness.js';

const api = useApi();
let token: string;
let client: Client;

beforeAll(async () => {
  ({ token } = await workspaceWithToken(api.current));
  client = api.current.client(token);
});

function expectErrorShape(body: unknown, type: string): void {
  expect(body).toEqual({ error: { type, message: expect.any(String) } });
  expect(JSON.stringify(body)).not.toMatch(/\bat .+:\d+:\d+/); // no stack frames
}

/** The error of a client call, checked against the raw response it came from. */
async function clientError(call: Promise<unknown>, type: string): Promise<RetentionError> {
  const error = await rejectionOf(call);
  const raw = api.current.lastResponse();
  expectErrorShape(raw.body, type);
  expect(error).toMatchObject({ type, status: raw.status, message: raw.body.error.message });
  expect(error.requestId).toBe(raw.headers.get('request-id'));
  return error;
}

describe('the error table of spec part 7', () => {
  it.each([
    ['campaigns?cursor=yesterday', () => client.campaigns.list({ cursor: 'yesterday' }), 'cursor'],
    [
      'campaigns?cursor=2026-02-30T00:00:00Z',
      () => client.campaigns.list({ cursor: '2026-02-30T00:00:00Z' }),
      'cursor',
    ],
    ['customers?cursor=1700000000', () => client.customers.list({ cursor: '1700000000' }), 'cursor'],
    ['cancel_sessions?cursor=2026-13-01', () => client.cancelSessions.list({ cursor: '2026-13-01' }), 'cursor'],
    ['campaigns?status=open', () => client.campaigns.list({ status: 'open' as CampaignStatus }), 'status'],
    ['campaigns?status=IN_FLIGHT', () => client.campaigns.list({ status: 'IN_FLIGHT' as CampaignStatus }), 'status'],
    [
      'cancel_sessions?outcome=saved',
      () => client.cancelSessions.list({ outcome: 'saved' as CancelOutcome }),
      'outcome',
    ],
    ['customers/not-a-uuid', () => client.customers.retrieve('not-a-uuid'), 'id'],
    ['campaigns/123', () => client.campaigns.retrieve('123'), 'id'],
    [
      'campaigns/6f1c2a52-9d1e-4a8e-b2c4-1f0e2d3c4b5az',
      () => client.campaigns.retrieve('6f1c2a52-9d1e-4a8e-b2c4-1f0e2d3c4b5az'),
      'id',
    ],
  ] as Array<[string, () => Promise<unknown>, string]>)(
    '%s is 400 invalid_param naming %s',
    async (_path, call, name) => {
      const error = await clientError(call(), 'invalid_param');
      expect(error).toBeInstanceOf(InvalidParamError);
      expect(error.status).toBe(400);
      expect(error.message).toContain(name);
    },
  );

  it.each([
    ['/api/v1/customers?emial=a%40b.co', 'Unknown query parameter "emial"'],
    ['/api/v1/campaigns?status=lost&status=recovered', '"status" is given more than once'],
    ['/api/v1/campaigns?status=', '"status" must not be empty'],
    ['/api/v1/campaigns?cursor', '"cursor" must not be empty'],
    ['/api/v1/stats?verbose=1', 'Unknown query parameter "verbose"'],
    ['/api/v1/campaigns/6f1c2a52-9d1e-4a8e-b2c4-1f0e2d3c4b5a?expand=customer', 'Unknown query parameter "expand"'],
    ['/api/v1/customers?tag=%00', 'control characters'],
    // Decoded leniently, these were used as literal text ("a%ZZ") or with U+FFFD in the bytes' place.
    ['/api/v1/customers?email=a%ZZ', 'Query parameter "email" is not valid percent-encoded UTF-8'],
    ['/api/v1/customers?email=a%4', 'Query parameter "email" is not valid percent-encoded UTF-8'],
    ['/api/v1/customers?tag=%FF', 'Query parameter "tag" is not valid percent-encoded UTF-8'],
    ['/api/v1/customers?tag=%C3%28', 'Query parameter "tag" is not valid percent-encoded UTF-8'],
    ['/api/v1/customers?tag=%ED%A0%80', 'Query parameter "tag" is not valid percent-encoded UTF-8'],
    ['/api/v1/campaigns?cursor=2026-03-07%', 'Query parameter "cursor" is not valid percent-encoded UTF-8'],
    ['/api/v1/customers?em%ZZail=a', 'A query parameter name ("em%ZZail") is not valid percent-encoded UTF-8'],
    [`/api/v1/customers?email=${'a'.repeat(400)}`, '1 to 320 characters'],
  ])('%s is 400 invalid_param: %s', async (path, message) => {
    const { status, body } = await api.current.get(path, token);
    expect(status).toBe(400);
    expectErrorShape(body, 'invalid_param');
    expect(body.error.message).toContain(message);
  });

  it.each([
    ['customer', (id: string) => client.customers.retrieve(id)],
    ['campaign', (id: string) => client.campaigns.retrieve(id)],
  ])('an unknown %s id is 404 not_found', async (noun, retrieve) => {
    const error = await clientError(retrieve('7d1c2a52-9d1e-4a8e-b2c4-1f0e2d3c4b5a'), 'not_found');
    expect(error).toBeInstanceOf(NotFoundError);
    expect(error.status).toBe(404);
    expect(error.message).toContain(noun);
  });

  it.each([
    ['an unknown path under /api/v1', 'GET', '/api/v1/invoices'],
    ['an unknown path elsewhere', 'GET', '/admin'],
    ['a wrong method on a known path', 'POST', '/api/v1/campaigns'],
    ['DELETE on a resource', 'DELETE', '/api/v1/customers/7d1c2a52-9d1e-4a8e-b2c4-1f0e2d3c4b5a'],
    ['a trailing path segment', 'GET', '/api/v1/stats/extra'],
    // Paths are exact: another case or a trailing slash is another path.
    ['a path in another case', 'GET', '/api/v1/Campaigns'],
    ['a prefix in another case', 'GET', '/API/v1/campaigns'],
    ['a list with a trailing slash', 'GET', '/api/v1/campaigns/'],
    ['stats with a trailing slash', 'GET', '/api/v1/stats/'],
    ['a resource with a trailing slash', 'GET', '/api/v1/customers/7d1c2a52-9d1e-4a8e-b2c4-1f0e2d3c4b5a/'],
    // Express would answer these itself, 200 text/plain "GET, HEAD".
    ['OPTIONS on a list', 'OPTIONS', '/api/v1/customers'],
    ['OPTIONS on a resource', 'OPTIONS', '/api/v1/campaigns/7d1c2a52-9d1e-4a8e-b2c4-1f0e2d3c4b5a'],
    ['OPTIONS on a probe', 'OPTIONS', '/healthz'],
    ['PUT on the documentation', 'PUT', '/openapi.json'],
  ])('%s is a JSON 404, never an HTML page', async (_label, method, path) => {
    const { status, body, headers } = await api.current.get(path, token, {
      method,
      body: method === 'GET' ? null : '{"a":1}',
    });
    expect(status).toBe(404);
    expect(headers.get('content-type')).toBe('application/json; charset=utf-8');
    expectErrorShape(body, 'not_found');
    expect((body as { error: { message: string } }).error.message).toContain(`(${method} ${path})`);
  });

  it('answers a malformed percent-encoding with invalid_param', async () => {
    const { status, body } = await api.current.get('/api/v1/customers/%E0%A4%A', token);
    expect(status).toBe(400);
    expectErrorShape(body, 'invalid_param');
  });

  it('decodes valid percent-encoding and UTF-8 in a query value', async () => {
    const { status, body } = await api.current.get('/api/v1/customers?tag=caf%C3%A9&email=a%2Bb%40example.com', token);
    expect(status).toBe(200);
    expect(body).toMatchObject({ object: 'list', data: [] });
  });

  it('accepts every valid cursor syntax', async () => {
    for (const cursor of [
      '2026-03-07T09:15:02Z',
      '2026-03-07T09:15:02.123456Z',
      '2026-03-07T09:15:02+01:00',
      '2026-03-07t09:15:02-05:30',
      '2026-03-07',
      '2026-11-20T10:00:00.1234567891Z',
      `2026-11-20T10:00:00.${'1'.repeat(100)}+05:30`,
    ]) {
      expect((await client.campaigns.list({ cursor })).object).toBe('list');
      expect(api.current.lastResponse().status).toBe(200);
    }
  });
});

describe("an unencoded '+'", () => {
  it('in a cursor offset is still refused, with advice to send %2B', async () => {
    const { status, body } = await api.current.get('/api/v1/campaigns?cursor=2026-03-07T10:15:02+01:00', token);
    expect(status).toBe(400);
    expectErrorShape(body, 'invalid_param');
    expect(body.error.message).toMatch(
      /^Query parameter "cursor" must be an RFC 3339 timestamp such as 2026-03-07T09:15:02Z, or a date such as 2026-03-07\. /,
    );
    expect(body.error.message).toContain('%2B');
  });

  it('is not mentioned when the refused value has no space', async () => {
    const { body } = await api.current.get('/api/v1/campaigns?cursor=2026-03-07T10:15:02', token);
    expect(body.error.message).not.toContain('%2B');
  });

  it('in an email filter is refused, with the same advice, rather than matching no customer', async () => {
    const { status, body } = await api.current.get('/api/v1/customers?email=dev+walk@example.com', token);
    expect(status).toBe(400);
    expectErrorShape(body, 'invalid_param');
    expect(body.error.message).toMatch(/^Query parameter "email" must be 1 to 320 characters without spaces/);
    expect(body.error.message).toContain('%2B');
    expect((await api.current.get('/api/v1/customers?email=dev%2Bwalk@example.com', token)).status).toBe(200);
  });

  it('percent-encoded, is an offset like any other', async () => {
    const { status } = await api.current.get('/api/v1/campaigns?cursor=2026-03-07T10:15:02%2B01:00', token);
    expect(status).toBe(200);
  });
});

describe('Request-Id', () => {
  it('is on every response, and the log line of a failed request carries the same id', async () => {
    const responses = await Promise.all([
      api.current.get('/api/v1/campaigns', token),
      api.current.get('/api/v1/campaigns?status=x', token),
      api.current.get('/api/v1/campaigns'),
      api.current.get('/nowhere'),
    ]);
    const ids = responses.map((response) => response.headers.get('request-id'));
    for (const id of ids) expect(id).toMatch(/^req_[0-9a-f]{32}$/);
    expect(new Set(ids).size).toBe(4);
    const logged = api.current.logs().find((line) => line.requestId === ids[1]);
    expect(logged).toMatchObject({ status: 400, path: '/api/v1/campaigns', method: 'GET' });
  });

  it('keeps a well-formed id sent by a proxy and replaces a malformed one', async () => {
    expect(
      (await api.current.get('/api/v1/stats', token, { headers: { 'x-request-id': 'lb-12345678' } })).headers.get(
        'request-id',
      ),
    ).toBe('lb-12345678');
    expect(
      (await api.current.get('/api/v1/stats', token, { headers: { 'request-id': 'bad id <script>' } })).headers.get(
        'request-id',
      ),
    ).toMatch(/^req_/);
  });

  it('never logs the Authorization header or the token', async () => {
    await api.current.get('/api/v1/campaigns?status=x', token);
    const text = JSON.stringify(api.current.logs());
    expect(text).not.toContain(token);
    expect(text.toLowerCase()).not.toContain('authorization');
  });
});

describe('caching', () => {
  it('marks account data as not cacheable', async () => {
    expect((await api.current.get('/api/v1/campaigns', token)).headers.get('cache-control')).toBe('no-store');
  });
});
