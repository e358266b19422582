import { beforeAll, describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { useApi, workspaceWithToken } from './harness.js';

const api = useApi();
let token: string;

beforeAll(async () => {
  ({ token } = await workspaceWithToken(api.current, {
    customers: [{ key: 'c', email: 'a@b.co', tags: ['vip'], subscriptions: [{}] }],
    campaigns: [{ customer: 'c' }],
    cancel_sessions: [{ customer: 'c' }],
  }));
});

const NASTY = [
  "'; DROP TABLE customers; --",
  '" OR 1=1 --',
  '\\',
  '%',
  '%00',
  '%ZZ',
  '\u0000',
  '\u202e',
  '😀',
  'ß'.repeat(300),
  'x'.repeat(5000),
  '2026-02-30',
  '2026-03-07T09:15:02.123456789Z',
  '-1',
  'NaN',
  '[]',
  '{}',
  'null',
  'in_flight',
  'saved_pause',
  '2026-03-07',
];

const names = fc.oneof(
  fc.constantFrom(
    'email',
    'tag',
    'cursor',
    'status',
    'outcome',
    'limit',
    'starting_after',
    'email[]',
    'cursor[0]',
    '__proto__',
    'constructor',
  ),
  fc.string({ maxLength: 20 }),
);
const values = fc.oneof(
  fc.constantFrom(...NASTY),
  fc.string({ maxLength: 200, unit: 'binary' }),
  fc.string({ maxLength: 50 }),
);
const encodedPair = fc
  .tuple(names, values)
  .map(([name, value]) => `${encodeURIComponent(name)}=${encodeURIComponent(value)}`);
const rawPair = fc
  .tuple(names, fc.constantFrom(...NASTY))
  .map(([name, value]) => `${encodeURIComponent(name)}=${value.replace(/[\s#]/g, '')}`);
const queryStrings = fc
  .array(fc.oneof(encodedPair, rawPair, fc.constant('cursor'), fc.constant('&')), { maxLength: 6 })
  .map((pairs) => pairs.join('&'));

describe.each(['/api/v1/customers', '/api/v1/campaigns', '/api/v1/cancel_sessions'])(
  'random query strings at %s',
  (path) => {
    it('never get a 500, and always get JSON of a documented shape', async () => {
      await fc.assert(
        fc.asyncProperty(queryStrings, async (query) => {
          const { status, body, headers } = await api.current.get(`${path}?${query}`, token);
          expect(status).not.toBeGreaterThanOrEqual(500);
          expect(headers.get('content-type')).toBe('application/json; charset=utf-8');
          if (status === 200) expect(body.object).toBe('list');
          else expect(body).toEqual({ error: { type: 'invalid_param', message: expect.any(String) } });
        }),
        { numRuns: 250 },
      );
    });
  },
);
