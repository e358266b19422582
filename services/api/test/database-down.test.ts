import { beforeAll, describe, expect, it } from '@jest/globals';
import { loadFixtures } from '@retention/domain';
import { useApi } from './harness.js';
import { testSecretsKeyBytes } from '@retention/testkit';

// The API's own pool points at a port where no PostgreSQL listens; token look-ups fail.
const api = useApi({ databaseUrl: 'postgres://postgres:postgres@127.0.0.1:1/nowhere' });

let token: string;
beforeAll(async () => {
  const result = await loadFixtures(api.current.db, testSecretsKeyBytes(), {
    workspaces: [{ key: 'w', tokens: [{ key: 't' }] }],
  });
  token = result.workspaces.w!.tokens.t!.token;
});

describe('a database that is down', () => {
  it('is a 500 database_error asking the client to retry, logged with the request id and no stack in the body', async () => {
    const { status, body, headers } = await api.current.get('/api/v1/campaigns', token);
    expect(status).toBe(500);
    expect(body).toEqual({ error: { type: 'database_error', message: expect.stringMatching(/retry/i) } });
    const id = headers.get('request-id');
    const errorLine = api.current.logs().find((line) => line.requestId === id && line.level === 'error' && line.err);
    expect(errorLine).toBeDefined();
    expect(JSON.stringify(body)).not.toContain('ECONNREFUSED');
    // Redis is up: a PostgreSQL failure in token admission is not taken for a Redis one
    // (which would serve without a limit and look the token up a second time).
    expect(api.current.logs().some((line) => String(line.msg).includes('rate limit unavailable'))).toBe(false);
  }, 20_000);

  it('keeps serving after the failure (the process did not crash)', async () => {
    expect((await api.current.get('/healthz')).status).toBe(200);
  });
});
