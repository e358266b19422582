import { Writable } from 'node:stream';
import { describe, expect, it } from '@jest/globals';
import { createLogger } from '../src/index.js';

function capture() {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
      callback();
    },
  });
  return { logger: createLogger('test', 'trace', sink), text: () => lines.join('\n'), lines };
}

const TOKEN = `sk_live_${'A1b2'.repeat(8)}`;
const SECRET = `whsec_${'Zz9'.repeat(14)}`;

describe('the logger', () => {
  it('writes one JSON object per line with service, level name and ISO time', () => {
    const { logger, lines } = capture();
    logger.info({ requestId: 'req_1' }, 'request');
    expect(JSON.parse(lines[0]!)).toMatchObject({
      service: 'test',
      level: 'info',
      requestId: 'req_1',
      msg: 'request',
      time: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
    });
  });

  it('masks secrets in messages, in every string field however deep, and in errors', () => {
    const { logger, text } = capture();
    logger.info(`token ${TOKEN}`);
    logger.info({ path: `/api/v1/customers/${TOKEN}`, nested: { list: [`x ${SECRET}`] } }, 'request');
    logger.error({ err: new Error(`bad secret ${SECRET}`) }, 'failed');
    logger.warn(new Error(`token ${TOKEN} refused`));
    const output = text();
    expect(output).not.toContain(TOKEN.slice(8));
    expect(output).not.toContain(SECRET.slice(6));
    expect(output).toContain('/api/v1/customers/sk_live_[redacted]');
    expect(output).toContain('x whsec_[redacted]');
  });

  it("masks the processor connection's secrets: Stripe keys in text, and the fields that hold them", () => {
    const { logger, text } = capture();
    const keys = [`rk_live_${'Q7w'.repeat(20)}`, `rk_test_${'E4r'.repeat(20)}`, `sk_test_${'T5y'.repeat(20)}`];
    logger.error({ err: new Error(`Invalid API Key provided: ${keys[0]}`) }, `retry with ${keys[1]}`);
    logger.info(
      { api_key: 'plain-value-1', webhook_secret: 'plain-value-2', config: { secretsKey: 'plain-value-3' } },
      'x',
    );
    const output = text();
    for (const key of keys) expect(output).not.toContain(key.slice(8));
    expect(output).not.toMatch(/plain-value/);
    expect(output).toContain('rk_live_[redacted]');
  });

  it('masks secrets glued to a word character, as request paths can carry them', () => {
    const { logger, text } = capture();
    const paths = [
      `/api/v1/customers/a%2F${TOKEN}`,
      `/x/1${TOKEN}`,
      `/y/_${SECRET}`,
      `/z/%20${SECRET}`,
      `/w/${TOKEN}${SECRET}`,
    ];
    for (const path of paths) logger.info({ path }, `GET ${path}`);
    const output = text();
    expect(output).not.toContain(TOKEN.slice(8));
    expect(output).not.toContain(SECRET.slice(6));
    expect(output).toContain('/x/1sk_live_[redacted]');
    expect(output).toContain('/y/_whsec_[redacted]');
  });

  it('censors credential fields by name', () => {
    const { logger, text } = capture();
    logger.info({ authorization: 'Bearer x', headers: { authorization: 'Basic y' }, token: 't', secret: 's' }, 'x');
    const line = JSON.parse(text());
    expect(line).toMatchObject({ authorization: '[redacted]', headers: { authorization: '[redacted]' } });
    expect(line).toMatchObject({ token: '[redacted]', secret: '[redacted]' });
  });

  it('censors credential fields at any depth, in arrays too, without touching the object logged', () => {
    const { logger, text } = capture();
    const logged = {
      request: { headers: { authorization: 'Bearer deep-1' } },
      endpoints: [
        { id: 'e1', signing_secret: 'deep-2' },
        { id: 'e2', signing_secret_sealed: 'v1.deep-5', previous_signing_secret_sealed: 'v1.deep-6' },
      ],
      connection: { settings: { api_key: 'deep-3', webhook_secret: 'deep-4' } },
      token_id: 'tok_visible',
    };
    logger.info(logged, 'x');
    const output = text();
    expect(output).not.toMatch(/deep-\d/);
    expect(JSON.parse(output)).toMatchObject({
      request: { headers: { authorization: '[redacted]' } },
      endpoints: [
        { id: 'e1', signing_secret: '[redacted]' },
        { id: 'e2', signing_secret_sealed: '[redacted]', previous_signing_secret_sealed: '[redacted]' },
      ],
      connection: { settings: { api_key: '[redacted]', webhook_secret: '[redacted]' } },
      token_id: 'tok_visible',
    });
    // The caller's object is the caller's: censoring works on a copy.
    expect(logged.request.headers.authorization).toBe('Bearer deep-1');
    expect(logged.endpoints[0]!.signing_secret).toBe('deep-2');
  });

  it("censors a child logger's bindings, null-prototype objects, class instances and an Error under any key", () => {
    const { logger, text } = capture();
    logger.child({ token: 'bound-1', headers: { authorization: 'Bearer bound-2' } }).info('x');
    const bare = Object.assign(Object.create(null) as Record<string, unknown>, { api_key: 'bare-3' });
    class Settings {
      webhook_secret = 'instance-4';
    }
    const failure = Object.assign(new Error('refused'), { token: 'error-5' });
    logger.info({ bare, settings: new Settings(), error: failure, when: new Date(0), bytes: Buffer.from('ok') }, 'y');
    const output = text();
    expect(output).not.toMatch(/bound-\d|bare-3|instance-4|error-5/);
    const [bound, fields] = output.split('\n').map((line) => JSON.parse(line));
    expect(bound).toMatchObject({ token: '[redacted]', headers: { authorization: '[redacted]' } });
    expect(fields).toMatchObject({
      bare: { api_key: '[redacted]' },
      settings: { webhook_secret: '[redacted]' },
      error: { token: '[redacted]' },
      when: '1970-01-01T00:00:00.000Z',
      bytes: { type: 'Buffer', data: [111, 107] },
    });
    // A child of a child keeps its parent's bindings, and has its own scrubbed.
    const nested = capture();
    nested.logger.child({ request_id: 'req_1' }).child({ secret: 'grand-6' }).info('z');
    expect(JSON.parse(nested.text())).toMatchObject({ request_id: 'req_1', secret: '[redacted]' });
  });
});
