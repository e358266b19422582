import { connect, type Socket } from 'node:net';
import { describe, expect, it } from '@jest/globals';
import { ConfigError, loadConfig } from '@retention/core';
import { testSecretsKey } from '@retention/testkit';
import { useApi } from './harness.js';

const api = useApi({
  env: { API_HEADERS_TIMEOUT_MS: '500', API_REQUEST_TIMEOUT_MS: '1000', API_MAX_CONNECTIONS: '20' },
});

function open(): Promise<Socket> {
  const { hostname, port } = new URL(api.current.url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => resolve(socket));
    socket.on('error', reject);
  });
}

/** Resolves with what the server sent and when it closed the connection. */
function closed(socket: Socket): Promise<{ text: string; at: number }> {
  const chunks: Buffer[] = [];
  socket.on('data', (chunk: Buffer) => chunks.push(chunk));
  return new Promise((resolve) => {
    socket.on('close', () => resolve({ text: Buffer.concat(chunks).toString('latin1'), at: Date.now() }));
  });
}

describe('slow clients', () => {
  it('cuts a slowloris that sends a header line every 100 ms at the headers timeout, with a JSON 400 invalid_param', async () => {
    const socket = await open();
    const end = closed(socket);
    const started = Date.now();
    socket.write('GET /api/v1/campaigns HTTP/1.1\r\nHost: api\r\n');
    let line = 0;
    const drip = setInterval(() => {
      if (!socket.destroyed) socket.write(`X-Padding-${(line += 1)}: a\r\n`);
    }, 100);
    const { text, at } = await end;
    clearInterval(drip);
    // invalid_param is 400 in the spec's catalog; the message says what happened.
    expect(text).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
    expect(text).toContain('"type":"invalid_param"');
    expect(text).toContain('not received in full in time');
    // 500 ms, checked every 250 ms: never the minute of Node's default.
    expect(at - started).toBeGreaterThanOrEqual(450);
    expect(at - started).toBeLessThan(3_000);
  });

  it('closes connections over API_MAX_CONNECTIONS on arrival, and serves again once they are gone', async () => {
    const held = await Promise.all(Array.from({ length: 20 }, () => open()));
    const extra = await open();
    const { text } = await closed(extra);
    expect(text).toBe('');
    // Refused on arrival: closed while the 20 it was over were all still open.
    expect(held.filter((socket) => socket.destroyed)).toHaveLength(0);
    held.forEach((socket) => socket.destroy());
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect((await api.current.get('/healthz')).status).toBe(200);
    expect(api.current.logs().some((entry) => entry.msg === 'connection refused: too many open connections')).toBe(
      true,
    );
  });
});

describe('the limits’ configuration', () => {
  it('defaults to a 10 s headers timeout, a 30 s request timeout and 2000 connections', () => {
    expect(loadConfig({ SECRETS_KEY: testSecretsKey() })).toMatchObject({
      apiHeadersTimeoutMs: 10_000,
      apiRequestTimeoutMs: 30_000,
      apiMaxConnections: 2000,
    });
  });

  it.each([
    [{ API_HEADERS_TIMEOUT_MS: 'soon' }, 'API_HEADERS_TIMEOUT_MS'],
    [{ API_REQUEST_TIMEOUT_MS: '0' }, 'API_REQUEST_TIMEOUT_MS'],
    [{ API_HEADERS_TIMEOUT_MS: '20000', API_REQUEST_TIMEOUT_MS: '15000' }, 'API_REQUEST_TIMEOUT_MS'],
    [{ API_MAX_CONNECTIONS: '0' }, 'API_MAX_CONNECTIONS'],
  ])('refuses %p naming %s', (env, variable) => {
    const withKey = { SECRETS_KEY: testSecretsKey(), ...env };
    expect(() => loadConfig(withKey)).toThrow(ConfigError);
    expect(() => loadConfig(withKey)).toThrow(new RegExp(`^Invalid ${variable}:`));
  });
});
