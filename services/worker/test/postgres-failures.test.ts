import { Writable } from 'node:stream';
import { describe, expect, it } from '@jest/globals';
import { createLogger } from '@retention/runtime';
import { postgresFailures } from '../src/postgres-failures.js';

/** A loop's failure as the worker logs it: an outage's without a stack, a bug's with one. */
describe('postgresFailures', () => {
  const logged = () => {
    const lines: Array<Record<string, any>> = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, callback) {
        for (const line of chunk.toString('utf8').split('\n').filter(Boolean)) lines.push(JSON.parse(line));
        callback();
      },
    });
    return { failures: postgresFailures(createLogger('test', 'info', sink)), lines };
  };

  it("tells a driver's error without a stack, and a TypeError of our own code with its stack", () => {
    const { failures, lines } = logged();
    failures.failed(
      'outbox dispatch',
      Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }),
      'outbox dispatch failed',
    );
    failures.failed('processor events', new TypeError("Cannot read properties of undefined (reading 'id')"), 'failed');
    expect(lines[0]).toMatchObject({ source: 'outbox dispatch', error: { code: 'ECONNREFUSED' } });
    expect(lines[0]).not.toHaveProperty('stack');
    expect(lines[1]).toMatchObject({ source: 'processor events', error: { type: 'TypeError' } });
    expect(lines[1]!.stack).toMatch(/TypeError: Cannot read properties[\s\S]*\n\s+at /);
  });
});
