import { inspect } from 'node:util';
import { beforeAll, describe, expect, it } from '@jest/globals';
import {
  ApiError,
  AuthenticationRequiredError,
  Client,
  InvalidParamError,
  InvalidTokenError,
  NotFoundError,
  RetentionError,
  UnexpectedResponseError,
  type CampaignStatus,
  type RecoveryCampaign,
} from '@retention/sdk';
import { useApi, workspaceWithToken } from '../../../services/api/test/harness.js';
import { rejectionOf } from '../../../services/api/test/client-helpers.js';

const api = useApi();

let token: string;
let ids: Awaited<ReturnType<typeof workspaceWithToken>>['ids'];
let client: Client;

const CAMPAIGNS = 130;
const ODD_EMAIL = 'O+Tag&x=1@Example.com';

beforeAll(async () => {
  ({ token, ids } = await workspaceWithToken(api.current, {
    customers: [
      {
        key: 'ann',
        email: 'ann@example.com',
        tags: ['vip'],
        created_at: '2026-01-01T00:00:00.000Z',
        subscriptions: [{ key: 'ann-sub' }],
      },
      { key: 'odd', email: ODD_EMAIL, tags: ['a b&c'], created_at: '2026-01-02T00:00:00.000Z' },
    ],
    campaigns: Array.from({ length: CAMPAIGNS }, (_, i) => ({
      key: `k${i}`,
      customer: 'ann',
      status: i % 3 === 0 ? ('lost' as const) : ('in_flight' as const),
      first_failed_at: new Date(Date.UTC(2026, 0, 1) + i * 60_000).toISOString(),
    })),
    cancel_sessions: Array.from({ length: 60 }, (_, i) => ({
      key: `x${i}`,
      customer: 'ann',
      outcome: i % 2 === 0 ? ('saved_pause' as const) : ('canceled' as const),
      created_at: new Date(Date.UTC(2026, 1, 1) + i * 1000).toISOString(),
    })),
  }));
  client = api.current.client(token);
});

async function collect<T>(iterable: AsyncIterable<T>): Promise<T[]> {
  const rows: T[] = [];
  for await (const row of iterable) rows.push(row);
  return rows;
}

describe('customers', () => {
  it('list returns one page, filtered by email and tag with the values encoded', async () => {
    const page = await client.customers.list();
    expect(page).toMatchObject({ object: 'list', has_more: false, next_cursor: '2026-01-01T00:00:00.000Z' });
    expect(page.data.map((customer) => customer.id)).toEqual([ids.customers.odd, ids.customers.ann]);
    expect((await client.customers.list({ email: ODD_EMAIL.toLowerCase() })).data.map((c) => c.id)).toEqual([
      ids.customers.odd,
    ]);
    expect((await client.customers.list({ tag: 'A B&C' })).data.map((c) => c.id)).toEqual([ids.customers.odd]);
    expect((await client.customers.list({ tag: 'vip', email: 'ann@example.com' })).data).toHaveLength(1);
  });

  it('list takes the cursor as a string or a Date', async () => {
    const older = [ids.customers.ann];
    expect((await client.customers.list({ cursor: '2026-01-02T00:00:00.000Z' })).data.map((c) => c.id)).toEqual(older);
    expect((await client.customers.list({ cursor: new Date('2026-01-02T00:00:00Z') })).data.map((c) => c.id)).toEqual(
      older,
    );
  });

  it('retrieve returns the customer with its subscriptions and recent campaigns', async () => {
    const customer = await client.customers.retrieve(ids.customers.ann!);
    expect(customer).toMatchObject({ id: ids.customers.ann, object: 'customer', email: 'ann@example.com' });
    expect(customer.subscriptions.map((subscription) => subscription.id)).toEqual([ids.subscriptions['ann-sub']]);
    expect(customer.recent_campaigns.map((campaign) => campaign.id)).toEqual(
      [129, 128, 127, 126, 125].map((i) => ids.campaigns[`k${i}`]),
    );
  });

  it('all walks every page', async () => {
    expect((await collect(client.customers.all())).map((c) => c.id)).toEqual([ids.customers.odd, ids.customers.ann]);
    expect(await collect(client.customers.all({ tag: 'nobody' }))).toEqual([]);
  });
});

describe('campaigns', () => {
  it('list returns the newest page of 50 with a cursor for the next', async () => {
    const page = await client.campaigns.list();
    expect(page.data).toHaveLength(50);
    expect(page.has_more).toBe(true);
    expect(page.data[0]!.id).toBe(ids.campaigns.k129);
    expect(page.next_cursor).toBe(page.data[49]!.first_failed_at);
    const next = await client.campaigns.list({ cursor: page.next_cursor! });
    expect(next.data[0]!.id).toBe(ids.campaigns.k79);
  });

  it('all walks every page through next_cursor, each row once, newest first', async () => {
    const rows = await collect(client.campaigns.all());
    expect(rows.map((campaign) => campaign.id)).toEqual(
      Array.from({ length: CAMPAIGNS }, (_, i) => ids.campaigns[`k${CAMPAIGNS - 1 - i}`]),
    );
  });

  it.each([
    ['lost', 44],
    ['in_flight', 86],
    ['recovered', 0],
  ] as Array<[CampaignStatus, number]>)('all({ status: %s }) walks only that status', async (status, count) => {
    const rows = await collect(client.campaigns.all({ status }));
    expect(rows).toHaveLength(count);
    expect(rows.every((campaign) => campaign.status === status)).toBe(true);
  });

  it('all starts from a given cursor, and stops fetching when the loop stops', async () => {
    const fromCursor = await collect(client.campaigns.all({ cursor: '2026-01-01T00:10:00.000Z' }));
    expect(fromCursor.map((campaign) => campaign.id)).toEqual(
      [9, 8, 7, 6, 5, 4, 3, 2, 1, 0].map((i) => ids.campaigns[`k${i}`]),
    );

    const before = requestCount();
    const firstTwo: RecoveryCampaign[] = [];
    for await (const campaign of client.campaigns.all()) {
      firstTwo.push(campaign);
      if (firstTwo.length === 2) break;
    }
    expect(firstTwo).toHaveLength(2);
    expect(requestCount() - before).toBe(1);
  });

  it('retrieve returns the campaign with its customer and subscription summary', async () => {
    const campaign = await client.campaigns.retrieve(ids.campaigns.k3!);
    expect(campaign).toMatchObject({
      id: ids.campaigns.k3,
      object: 'recovery_campaign',
      status: 'lost',
      customer: { id: ids.customers.ann },
      subscription: { id: ids.subscriptions['ann-sub'], object: 'subscription' },
    });
  });
});

describe('cancel sessions', () => {
  it('list filters by outcome; all walks past the first page', async () => {
    const saved = await client.cancelSessions.list({ outcome: 'saved_pause' });
    expect(saved.data).toHaveLength(30);
    expect(saved.data.every((session) => session.outcome === 'saved_pause')).toBe(true);
    const everything = await collect(client.cancelSessions.all());
    expect(everything.map((session) => session.id).sort()).toEqual(Object.values(ids.cancel_sessions).sort());
    expect(everything[0]!.id).toBe(ids.cancel_sessions.x59);
  });
});

describe('stats', () => {
  it('retrieve returns the workspace KPIs', async () => {
    const stats = await client.stats.retrieve();
    expect(stats.object).toBe('stats');
    expect(stats.recovery).toMatchObject({ opened: CAMPAIGNS, in_flight: 86, lost: 44 });
    expect(stats.cancel_flow).toMatchObject({ sessions: 60, saved: 30, canceled: 30, save_rate: 0.5 });
  });
});

describe('errors, typed by error.type', () => {
  it('an unknown id is a NotFoundError carrying status, message and the request id the API logged', async () => {
    const error = await rejectionOf(client.campaigns.retrieve('7d1c2a52-9d1e-4a8e-b2c4-1f0e2d3c4b5a'));
    expect(error).toBeInstanceOf(NotFoundError);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ type: 'not_found', status: 404, name: 'NotFoundError' });
    expect(error.message).toContain('No campaign with id');
    expect(error.requestId).toMatch(/^req_[0-9a-f]{32}$/);
    expect(api.current.logs().find((line) => line.requestId === error.requestId)).toMatchObject({ status: 404 });
  });

  it.each([
    ['not-a-uuid', 'not-a-uuid'],
    ['a/b', 'a/b'],
    ['x?status=lost', 'x?status=lost'],
    ['%2e%2e', '%2e%2e'],
  ])('retrieve(%j) reaches the API as one encoded path segment: invalid_param', async (id, shown) => {
    const error = await rejectionOf(client.customers.retrieve(id));
    expect(error).toBeInstanceOf(InvalidParamError);
    expect(error).toMatchObject({ type: 'invalid_param', status: 400 });
    expect(error.message).toContain(JSON.stringify(shown));
  });

  it.each(['', '.', '..'])('retrieve(%j), which no URL can carry, fails the same way without a request', async (id) => {
    const before = requestCount();
    const error = await rejectionOf(client.campaigns.retrieve(id));
    expect(error).toBeInstanceOf(InvalidParamError);
    expect(error).toMatchObject({ type: 'invalid_param', status: 400, requestId: null });
    expect(requestCount()).toBe(before);
  });

  it('a bad filter value or cursor is an InvalidParamError naming the parameter', async () => {
    const status = await rejectionOf(client.campaigns.list({ status: 'open' as CampaignStatus }));
    expect(status).toBeInstanceOf(InvalidParamError);
    expect(status.message).toContain('status');
    const cursor = await rejectionOf(client.customers.list({ cursor: 'yesterday' }));
    expect(cursor).toBeInstanceOf(InvalidParamError);
    expect(cursor.message).toContain('cursor');
  });

  it('an unknown parameter from untyped code reaches the API, which names it', async () => {
    const error = await rejectionOf(client.campaigns.list({ stauts: 'lost' } as never));
    expect(error).toBeInstanceOf(InvalidParamError);
    expect(error.message).toContain('Unknown query parameter "stauts"');
  });

  it('an unknown or malformed token is an InvalidTokenError', async () => {
    for (const bad of ['sk_live_0000000000000000000000000000000', 'sk_test_abc']) {
      const error = await rejectionOf(api.current.client(bad).stats.retrieve());
      expect(error).toBeInstanceOf(InvalidTokenError);
      expect(error).toMatchObject({ type: 'invalid_token', status: 401 });
    }
  });

  it('every API error class is an ApiError and a RetentionError', () => {
    const error = new AuthenticationRequiredError({
      type: 'authentication_required',
      message: 'm',
      status: 401,
      requestId: null,
    });
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toBeInstanceOf(RetentionError);
    expect(error).toBeInstanceOf(Error);
  });
});

describe('rate-limit headers', () => {
  it('are readable after each call, errors included, and null before the first', async () => {
    // A token of its own: its first request opens the window, whatever the other tests took.
    const own = await workspaceWithToken(api.current, {}, 500);
    const fresh = api.current.client(own.token);
    expect(fresh.rateLimit).toBeNull();
    await fresh.stats.retrieve();
    const first = fresh.rateLimit!;
    expect(first).toEqual({ limit: 500, remaining: 499, resetSeconds: 60 });
    await rejectionOf(fresh.campaigns.retrieve('7d1c2a52-9d1e-4a8e-b2c4-1f0e2d3c4b5a'));
    expect(fresh.rateLimit!.remaining).toBeLessThan(first.remaining);
  });
});

describe('the client object', () => {
  it('never shows the token when inspected, serialised or failing', async () => {
    expect(inspect(client, { depth: 5, showHidden: true })).not.toContain(token);
    expect(JSON.stringify(client)).not.toContain(token);
    const error = await rejectionOf(client.campaigns.retrieve('nope'));
    expect(inspect(error)).not.toContain(token);
  });

  it.each([
    [{ baseUrl: 'http://x' }, /token/],
    [{ token: '', baseUrl: 'http://x' }, /token/],
    [{ token: 'sk_live_a b', baseUrl: 'http://x' }, /spaces/],
    [{ token: 'sk_live_a', baseUrl: 'localhost:3000' }, /https/],
    [{ token: 'sk_live_a', baseUrl: 'not a url' }, /absolute URL/],
    [{ token: 'sk_live_a', baseUrl: 'http://x?y=1' }, /query string/],
    [{ token: 'sk_live_a', baseUrl: 'http://x', maxRetryWaitSeconds: -1 }, /maxRetryWaitSeconds/],
    [{ token: 'sk_live_a', baseUrl: 'http://x', timeoutSeconds: 0 }, /timeoutSeconds/],
  ])('refuses bad options at construction: %j', (options, message) => {
    expect(() => new Client(options as never)).toThrow(message);
  });

  it.each([
    // The dashboard's own API answers /dashboard/api/v1/... with its JSON 401 (no session).
    ['the dashboard', '/dashboard'],
    // Outside /api/v1 the service's JSON 404 for an unknown path.
    ['a path in another case', '/API/v1'],
  ])(
    'calls a baseUrl that is not the API (%s) an UnexpectedResponseError, not the error it read',
    async (_label, suffix) => {
      const wrong = new Client({ token, baseUrl: `${api.current.url}${suffix}`, maxRetries: 0 });
      const error = await rejectionOf(wrong.campaigns.list());
      expect(error).toBeInstanceOf(UnexpectedResponseError);
      expect(error.message).toContain('is baseUrl right?');
      expect((error as UnexpectedResponseError).body).toContain('"error"');
    },
  );

  it.each(['', '/', '/api/v1', '/api/v1/'])('accepts the base URL with the suffix %j', async (suffix) => {
    const stats = await new Client({ token, baseUrl: `${api.current.url}${suffix}` }).stats.retrieve();
    expect(stats.object).toBe('stats');
  });
});

/** Requests the API has logged so far. */
function requestCount(): number {
  return api.current.logs().filter((line) => typeof line.status === 'number').length;
}
