import { randomUUID } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import { useApi, workspaceWithToken, type ApiHarness } from './harness.js';
import { sendRaw } from './raw-http.js';

/**
 * Every answer of the API process says X-Content-Type-Options: nosniff, so no browser reads a
 * JSON error (which may echo what a caller sent) as HTML or script; behind https (BASE_URL) every
 * answer also says Strict-Transport-Security, and never includeSubDomains (docs/decisions.md,
 * "Headers").
 */
const plain = useApi();
const secure = useApi({ env: { BASE_URL: 'https://api.example.com' } });

const HSTS = 'max-age=31536000';
/** Not HTTP (the parser's refusal), and HTTP/1.1 without Host (the server's). */
const REFUSED = ['HELLO THERE\r\n\r\n', 'GET /api/v1/stats HTTP/1.1\r\n\r\n'];

/** One answer of each kind the process gives, by label: status and headers. */
async function answers(api: ApiHarness): Promise<Record<string, { status: number; headers: Headers }>> {
  const { token } = await workspaceWithToken(api);
  const fetchFrom = async (path: string, init: RequestInit = {}) => {
    const response = await fetch(`${api.url}${path}`, init);
    await response.arrayBuffer();
    return { status: response.status, headers: response.headers };
  };
  const bearer = (value: string) => ({ headers: { authorization: `Bearer ${value}` } });
  return {
    'an /api/v1 answer': await fetchFrom('/api/v1/stats', bearer(token)),
    'an /api/v1 refusal without a valid token': await fetchFrom('/api/v1/stats', bearer('rk_live_nope')),
    'an /api/v1 unknown path': await fetchFrom('/api/v1/nothing-here', bearer(token)),
    'an unknown path outside /api/v1': await fetchFrom('/nothing-here'),
    'a /dashboard/api answer': await fetchFrom('/dashboard/api/me'),
    'a /dashboard/api change from a foreign origin': await fetchFrom('/dashboard/api/session', {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: 'https://elsewhere.example' },
      body: '{}',
    }),
    "the Stripe receiver's refusal": await fetchFrom(`/processor/stripe/${randomUUID()}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    }),
    'a probe': await fetchFrom('/healthz'),
    'the dashboard page': await fetchFrom('/'),
  };
}

describe('security headers', () => {
  it('says nosniff on every answer, and no Strict-Transport-Security while BASE_URL is http', async () => {
    const seen = await answers(plain.current);
    expect(Object.values(seen).map(({ status }) => status)).toEqual([200, 401, 404, 404, 401, 403, 400, 200, 200]);
    for (const [label, { headers }] of Object.entries(seen)) {
      expect([label, headers.get('x-content-type-options')]).toEqual([label, 'nosniff']);
      expect([label, headers.get('strict-transport-security')]).toEqual([label, null]);
    }
    for (const request of REFUSED) {
      const { headers: refused } = await sendRaw(plain.current.url, request);
      expect(refused['x-content-type-options']).toBe('nosniff');
      expect(refused['strict-transport-security']).toBeUndefined();
    }
  });

  it('says Strict-Transport-Security for a year, without includeSubDomains, on every answer when BASE_URL is https', async () => {
    const seen = await answers(secure.current);
    for (const [label, { headers }] of Object.entries(seen)) {
      expect([label, headers.get('x-content-type-options')]).toEqual([label, 'nosniff']);
      expect([label, headers.get('strict-transport-security')]).toEqual([label, HSTS]);
    }
    for (const request of REFUSED) {
      const { headers: refused } = await sendRaw(secure.current.url, request);
      expect(refused['x-content-type-options']).toBe('nosniff');
      expect(refused['strict-transport-security']).toBe(HSTS);
    }
  });
});
