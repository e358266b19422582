import { Writable } from 'node:stream';
import { describe, expect, it } from '@jest/globals';
import { freePort } from '@retention/testkit';
import { createLogger, createRedis, throttledFailures, throttledWarn } from '../src/index.js';

function capture() {
  const lines: Array<Record<string, any>> = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      for (const line of chunk.toString('utf8').split('\n').filter(Boolean)) lines.push(JSON.parse(line));
      callback();
    },
  });
  return { logger: createLogger('test', 'info', sink), lines };
}

const refused = () =>
  Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:6379 sk_live_abc'), { code: 'ECONNREFUSED' });

describe('throttledWarn', () => {
  it('logs one line per source per interval, then says how many it held back, without a stack', async () => {
    const { logger, lines } = capture();
    const warn = throttledWarn(logger, 200);
    for (let i = 0; i < 50; i += 1) {
      warn('delivery queue', refused(), 'delivery queue error');
      warn('periodic queue', refused(), 'periodic queue error');
    }
    expect(lines.map((line) => line.source)).toEqual(['delivery queue', 'periodic queue']);
    expect(lines[0]).toMatchObject({
      level: 'warn',
      msg: 'delivery queue error',
      error: { type: 'Error', message: 'connect ECONNREFUSED 127.0.0.1:6379 sk_live_[redacted]', code: 'ECONNREFUSED' },
    });
    expect(lines[0]).not.toHaveProperty('held_back');
    expect(JSON.stringify(lines)).not.toMatch(/stack|\n\s+at /);

    await new Promise((resolve) => setTimeout(resolve, 250));
    warn('delivery queue', refused(), 'delivery queue error');
    expect(lines).toHaveLength(3);
    expect(lines[2]).toMatchObject({ source: 'delivery queue', held_back: 49 });
  });

  it('describes a refused connection to a name with several addresses by its first error', () => {
    const { logger, lines } = capture();
    throttledWarn(logger)('redis', new AggregateError([refused()]), 'redis connection error');
    expect(lines[0]!.error).toMatchObject({ message: expect.stringMatching(/^connect ECONNREFUSED/) });
  });
});

describe('throttledFailures', () => {
  it('says once when a failing source works again, with how many rounds failed', () => {
    const { logger, lines } = capture();
    const failures = throttledFailures(logger, 200);
    failures.succeeded('outbox dispatch'); // never failed: nothing to say
    for (let i = 0; i < 30; i += 1) failures.failed('outbox dispatch', refused(), 'outbox dispatch failed');
    failures.succeeded('outbox dispatch');
    failures.succeeded('outbox dispatch');
    expect(lines.map((line) => [line.level, line.msg])).toEqual([
      ['warn', 'outbox dispatch failed'],
      ['info', 'outbox dispatch: working again after 30 failed rounds'],
    ]);
    expect(lines[1]).toMatchObject({ source: 'outbox dispatch', failures: 30, failed_for_ms: expect.any(Number) });
  });

  it('keeps a source that fails and works by turns to a warning and a recovery per interval', async () => {
    const { logger, lines } = capture();
    const failures = throttledFailures(logger, 200);
    for (let i = 0; i < 50; i += 1) {
      failures.failed('processor events', refused(), 'processor events batch failed');
      failures.succeeded('processor events');
    }
    expect(lines.map((line) => line.level)).toEqual(['warn', 'info']);
    await new Promise((resolve) => setTimeout(resolve, 250));
    failures.failed('processor events', refused(), 'processor events batch failed');
    // The rounds held back meanwhile are counted in the next warning.
    expect(lines[2]).toMatchObject({ level: 'warn', held_back: 49 });
  });
});

describe('createRedis', () => {
  it('logs a connection that keeps failing once per 10 s, not once per reconnect attempt', async () => {
    const { logger, lines } = capture();
    const redis = createRedis(`redis://127.0.0.1:${await freePort()}`, 'command', 'retention-test-probe', logger);
    let errors = 0;
    redis.on('error', () => (errors += 1));
    try {
      await new Promise((resolve) => setTimeout(resolve, 2_500));
    } finally {
      redis.disconnect();
    }
    expect(errors).toBeGreaterThanOrEqual(3);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      msg: 'redis connection error',
      source: 'retention-test-probe',
      error: { code: 'ECONNREFUSED' },
    });
  });
});
