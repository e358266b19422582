import { request } from 'node:http';
import { beforeAll, describe, expect, it } from '@jest/globals';
import { createToken, revokeToken, setTokenRateLimit } from '@retention/domain';
import { InvalidTokenError, NotFoundError, type Client, type List } from '@retention/sdk';
import { announceTokenChange, tokenEpochKey } from '@retention/runtime';
import { eventually } from '@retention/testkit';
import { rejectionOf } from './client-helpers.js';
import { useApi, workspaceWithToken } from './harness.js';

const api = useApi();
/** What `token revoke` and `token set-limit` do after their update: tell the API processes. */
const announce = () => announceTokenChange(api.current.redis, api.current.redisKeyPrefix);

/** The token look-ups the API makes while `work` runs. */
async function tokenLookups(work: () => Promise<unknown>): Promise<number> {
  let count = 0;
  const seen = (query: { sql: string }) => {
    if (query.sql.includes('"api_tokens"') && query.sql.startsWith('select')) count += 1;
  };
  api.current.db.on('query', seen);
  try {
    await work();
  } finally {
    api.current.db.off('query', seen);
  }
  return count;
}

/** A GET with headers exactly as listed (name, value, name, value...), repeated names and all; Node adds no Host to such a list. */
function getWithRawHeaders(path: string, rawHeaders: string[]): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const sent = request(
      `${api.current.url}${path}`,
      { headers: ['Host', new URL(api.current.url).host, ...rawHeaders] },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () =>
          resolve({ status: response.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) }),
        );
      },
    );
    sent.on('error', reject);
    sent.end();
  });
}

let acme: Awaited<ReturnType<typeof workspaceWithToken>>;
let globex: { token: string; customer: string; campaign: string };

beforeAll(async () => {
  acme = await workspaceWithToken(api.current, {
    customers: [{ key: 'c', email: 'shared@example.com', tags: ['vip'], subscriptions: [{}] }],
    campaigns: [{ key: 'k', customer: 'c' }],
    cancel_sessions: [{ key: 'x', customer: 'c' }],
  });
  const other = await api.current.load({
    workspaces: [
      {
        key: 'g',
        tokens: [{ key: 't', rate_limit: 100_000 }],
        customers: [{ key: 'c', email: 'shared@example.com', tags: ['vip'], subscriptions: [{}] }],
        campaigns: [{ key: 'k', customer: 'c' }],
        cancel_sessions: [{ key: 'x', customer: 'c' }],
      },
    ],
  });
  const g = other.workspaces.g!;
  globex = { token: g.tokens.t!.token, customer: g.customers.c!, campaign: g.campaigns.k! };
});

describe('authentication', () => {
  it('answers 401 authentication_required without an Authorization header', async () => {
    const { status, body } = await api.current.get('/api/v1/campaigns');
    expect(status).toBe(401);
    expect(body).toEqual({
      error: { type: 'authentication_required', message: expect.stringContaining('Authorization: Bearer') },
    });
  });

  it.each([
    ['a token without the sk_live_ prefix', 'Bearer sk_test_abc'],
    ['a non-Bearer scheme', `Basic ${Buffer.from('user:pass').toString('base64')}`],
    ['Bearer with no token', 'Bearer'],
    ['an unknown token', 'Bearer sk_live_0000000000000000000000000000000'],
    ['a token with trailing junk', 'Bearer sk_live_abc def'],
  ])('answers 401 invalid_token for %s', async (_label, authorization) => {
    const { status, body } = await api.current.get('/api/v1/campaigns', undefined, { headers: { authorization } });
    expect(status).toBe(401);
    expect(body.error.type).toBe('invalid_token');
  });

  it.each([
    ['two tokens, the valid one first', (valid: string, other: string) => [valid, other]],
    ['two tokens, the valid one second', (valid: string, other: string) => [other, valid]],
    ['the same token twice', (valid: string) => [valid, valid]],
  ])('refuses two Authorization headers (%s) with 401 invalid_token', async (_label, tokensOf) => {
    // fetch would join them into one header; Node's parser would keep only the first.
    const tokens = tokensOf(acme.token, globex.token);
    const { status, body } = await getWithRawHeaders(
      '/api/v1/campaigns',
      tokens.flatMap((token) => ['Authorization', `Bearer ${token}`]),
    );
    expect(status).toBe(401);
    expect(body).toEqual({
      error: { type: 'invalid_token', message: expect.stringContaining('one Authorization header') },
    });
  });

  it('accepts the scheme in any case', async () => {
    const { status } = await api.current.get('/api/v1/campaigns', undefined, {
      headers: { authorization: `bearer ${acme.token}` },
    });
    expect(status).toBe(200);
  });

  it('rejects a revoked token on the very next request', async () => {
    const minted = await createToken(api.current.db, { workspace_id: acme.workspaceId, name: 'soon revoked' });
    const client = api.current.client(minted.token);
    expect((await client.stats.retrieve()).object).toBe('stats');
    expect(api.current.lastResponse().status).toBe(200);
    // Once more: the look-up is cached by now.
    expect((await client.stats.retrieve()).object).toBe('stats');
    await revokeToken(api.current.db, { id: minted.id }, { announce });
    const error = await rejectionOf(client.stats.retrieve());
    expect(error).toBeInstanceOf(InvalidTokenError);
    expect(error).toMatchObject({ status: 401, type: 'invalid_token' });
  });

  it('looks a token up once, then serves it from a cache that every announced change empties', async () => {
    const minted = await createToken(api.current.db, { workspace_id: acme.workspaceId, name: 'cached' });
    const client = api.current.client(minted.token);
    expect(await tokenLookups(() => client.stats.retrieve())).toBe(1);
    expect(await tokenLookups(() => client.stats.retrieve())).toBe(0);
    await announce();
    expect(await tokenLookups(() => client.stats.retrieve())).toBe(1);
  });

  it('looks a token up once for the requests that miss the cache together', async () => {
    // What happens to a busy token's entry every 10 s: every request in flight misses it at once.
    const minted = await createToken(api.current.db, { workspace_id: acme.workspaceId, name: 'busy' });
    const together = () =>
      Promise.all(Array.from({ length: 20 }, () => api.current.get('/api/v1/stats', minted.token)));
    let statuses: number[] = [];
    expect(await tokenLookups(async () => (statuses = (await together()).map(({ status }) => status)))).toBe(1);
    expect(statuses).toEqual(Array.from({ length: 20 }, () => 200));
  });

  it('still refuses a revoked token when Redis has lost the announcement with the rest of its data', async () => {
    const minted = await createToken(api.current.db, { workspace_id: acme.workspaceId, name: 'forgotten' });
    const client = api.current.client(minted.token);
    await client.stats.retrieve();
    await client.stats.retrieve(); // cached
    await revokeToken(api.current.db, { id: minted.id }, { announce });
    // A Redis restarted empty: the epoch is gone, and a new one is made, unlike any cached.
    await api.current.redis.del(tokenEpochKey(api.current.redisKeyPrefix));
    expect(await rejectionOf(client.stats.retrieve())).toBeInstanceOf(InvalidTokenError);
  });

  it('applies a raised limit on the next request', async () => {
    const minted = await createToken(api.current.db, { workspace_id: acme.workspaceId, name: 'raised' });
    const client = api.current.client(minted.token);
    await client.stats.retrieve();
    expect(client.rateLimit?.limit).toBe(60);
    await setTokenRateLimit(api.current.db, { id: minted.id, rate_limit_per_minute: 600 }, { announce });
    await client.stats.retrieve();
    expect(client.rateLimit?.limit).toBe(600);
  });

  it('records when a token was last used', async () => {
    const minted = await createToken(api.current.db, { workspace_id: acme.workspaceId, name: 'used' });
    await api.current.client(minted.token).stats.retrieve();
    const lastUsed = await eventually(
      async () => (await api.current.db('api_tokens').where({ id: minted.id }).first()).last_used_at,
    );
    expect(lastUsed).toBeInstanceOf(Date);
  });
});

describe('workspace isolation', () => {
  const listings: Array<[string, (client: Client) => Promise<List<{ id: string }>>]> = [
    ['customers', (client) => client.customers.list()],
    ['campaigns', (client) => client.campaigns.list()],
    ['cancel sessions', (client) => client.cancelSessions.list()],
    ['customers by email', (client) => client.customers.list({ email: 'shared@example.com' })],
    ['customers by tag', (client) => client.customers.list({ tag: 'vip' })],
  ];

  it.each(listings)('lists only the caller workspace rows: %s', async (_label, list) => {
    const mine = (await list(api.current.client(acme.token))).data.map((row) => row.id);
    const theirs = (await list(api.current.client(globex.token))).data.map((row) => row.id);
    expect(mine).toHaveLength(1);
    expect(theirs).toHaveLength(1);
    expect(mine).not.toEqual(theirs);
  });

  it('answers another workspace id exactly like an id that does not exist', async () => {
    const missing = '5f3c1e7a-0000-4000-8000-000000000000';
    const client = api.current.client(acme.token);
    for (const [theirs, retrieve] of [
      [globex.customer, (id: string) => client.customers.retrieve(id)],
      [globex.campaign, (id: string) => client.campaigns.retrieve(id)],
    ] as const) {
      const foreign = await rejectionOf(retrieve(theirs));
      const absent = await rejectionOf(retrieve(missing));
      expect(foreign).toBeInstanceOf(NotFoundError);
      expect(absent).toBeInstanceOf(NotFoundError);
      expect(foreign.status).toBe(404);
      expect(absent.status).toBe(404);
      expect(foreign.message.replace(theirs, 'ID')).toBe(absent.message.replace(missing, 'ID'));
    }
  });

  it('computes stats over the caller workspace only', async () => {
    expect((await api.current.client(acme.token).stats.retrieve()).recovery.opened).toBe(1);
    expect((await api.current.client(globex.token).stats.retrieve()).cancel_flow.sessions).toBe(1);
  });
});
