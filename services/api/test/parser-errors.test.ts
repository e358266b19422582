import { describe, expect, it } from '@jest/globals';
import { useApi } from './harness.js';
import { sendRaw } from './raw-http.js';

const api = useApi();

describe('requests the HTTP parser refuses', () => {
  it.each([
    [
      'a 20 KB query string',
      `GET /api/v1/customers?email=${'a'.repeat(20_000)}%40example.com HTTP/1.1\r\nHost: api\r\n\r\n`,
      // Not 431: the spec's catalog gives invalid_param the status 400 (docs/api.md, "Errors").
      'HTTP/1.1 400 Bad Request',
    ],
    [
      'a malformed header',
      'GET /api/v1/stats HTTP/1.1\r\nHost: api\r\nBad Header: y\r\n\r\n',
      'HTTP/1.1 400 Bad Request',
    ],
    [
      'a control character in the request line',
      'GET /api/v1/\x01stats HTTP/1.1\r\nHost: api\r\n\r\n',
      'HTTP/1.1 400 Bad Request',
    ],
    ['something that is not HTTP', 'HELLO THERE\r\n\r\n', 'HTTP/1.1 400 Bad Request'],
    // Refused by Node's server rather than its parser, with a bare 400 and no body, before.
    ['an HTTP/1.1 request without a Host header', 'GET /api/v1/stats HTTP/1.1\r\n\r\n', 'HTTP/1.1 400 Bad Request'],
    [
      // Not 413, for the same reason as the 20 KB query string.
      'oversized chunk extensions',
      `GET /api/v1/stats HTTP/1.1\r\nHost: api\r\nTransfer-Encoding: chunked\r\n\r\n1;${'a'.repeat(20_000)}\r\nx\r\n0\r\n\r\n`,
      'HTTP/1.1 400 Bad Request',
    ],
  ])('%s gets the JSON error shape, a Request-Id and a log line', async (_label, request, statusLine) => {
    const reply = await sendRaw(api.current.url, request);
    expect(reply.statusLine).toBe(statusLine);
    expect(reply.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(reply.headers.connection).toBe('close');
    expect(Number(reply.headers['content-length'])).toBe(Buffer.byteLength(reply.body));
    // The API answered it: the SDK reads an answer without this header as not the API's.
    expect(reply.headers['retention-api-version']).toBe('1');
    const body = JSON.parse(reply.body) as { error: { type: string; message: string } };
    expect(body).toEqual({ error: { type: 'invalid_param', message: expect.any(String) } });
    expect(body.error.message.length).toBeGreaterThan(10);
    // Refused before any token was read: nothing was counted, so there is no limit to report.
    expect(Object.keys(reply.headers).filter((name) => name.startsWith('x-ratelimit-'))).toEqual([]);

    const requestId = reply.headers['request-id']!;
    expect(requestId).toMatch(/^req_[0-9a-f]{32}$/);
    const status = Number(statusLine.split(' ')[1]);
    expect(api.current.logs().filter((line) => line.requestId === requestId)).toEqual([
      expect.objectContaining({ level: 'info', requestId, status, msg: 'request refused by the HTTP parser' }),
    ]);
  });

  it('says what to shorten when the URL is too long, and logs none of it', async () => {
    const reply = await sendRaw(
      api.current.url,
      `GET /api/v1/campaigns?cursor=${'9'.repeat(20_000)} HTTP/1.1\r\nHost: api\r\n\r\n`,
    );
    expect(JSON.parse(reply.body).error.message).toContain('Shorten the URL');
    const line = api.current.logs().find((entry) => entry.requestId === reply.headers['request-id']);
    expect(JSON.stringify(line)).not.toContain('9999');
  });

  it('keeps serving ordinary requests', async () => {
    await sendRaw(api.current.url, 'GET /api/v1/stats HTTP/1.1\r\nBad Header: y\r\n\r\n');
    const { status, body } = await api.current.get('/healthz');
    expect(status).toBe(200);
    expect(body).toBeDefined();
  });
});
