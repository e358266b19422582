import { describe, expect, it } from '@jest/globals';
import { checkReadiness } from '../src/index.js';

describe('checkReadiness', () => {
  it('is ready when every check answers, with each latency', async () => {
    const report = await checkReadiness({ postgres: () => Promise.resolve(1), redis: () => Promise.resolve('PONG') });
    expect(report).toEqual({
      status: 'ready',
      checks: {
        postgres: { status: 'up', latency_ms: expect.any(Number) },
        redis: { status: 'up', latency_ms: expect.any(Number) },
      },
    });
  });

  it('names the check that failed, with its reason', async () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
    const report = await checkReadiness({
      postgres: () => Promise.reject(refused),
      redis: () => Promise.resolve('PONG'),
    });
    expect(report.status).toBe('unavailable');
    expect(report.checks.postgres).toEqual({
      status: 'down',
      latency_ms: expect.any(Number),
      error: 'connect ECONNREFUSED 127.0.0.1:5432',
    });
    expect(report.checks.redis!.status).toBe('up');
  });

  it('gives up on a check that hangs after the timeout, and runs the checks side by side', async () => {
    const calledAt: number[] = [];
    const hangs = () => {
      calledAt.push(performance.now());
      return new Promise(() => undefined);
    };
    const started = performance.now();
    const report = await checkReadiness({ first: hangs, second: hangs }, 200);
    const elapsed = performance.now() - started;
    expect(report.checks.first).toMatchObject({ status: 'down', error: 'no answer within 200 ms' });
    expect(report.checks.second).toMatchObject({ status: 'down', error: 'no answer within 200 ms' });
    expect(elapsed).toBeGreaterThanOrEqual(190);
    // Side by side: the second is asked before the first's 200 ms are up, where one after the
    // other it would be asked 200 ms later. Not the whole run's time against 400 ms, which a
    // loaded machine stretched past it (530 ms) with the checks side by side.
    expect(calledAt).toHaveLength(2);
    expect(calledAt[1]! - calledAt[0]!).toBeLessThan(100);
  });

  it('swallows the late failure of a check it already gave up on', async () => {
    const unhandled: unknown[] = [];
    const record = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', record);
    try {
      const late = () => new Promise((_resolve, reject) => setTimeout(() => reject(new Error('late')), 60));
      expect((await checkReadiness({ late }, 20)).checks.late!.status).toBe('down');
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', record);
    }
  });

  it('describes a refused connection to several addresses, and a check that throws synchronously', async () => {
    const aggregate = new AggregateError(
      [Object.assign(new Error(''), { code: 'ECONNREFUSED' }), new Error('connect ECONNREFUSED ::1:6379')],
      '',
    );
    const report = await checkReadiness({
      redis: () => Promise.reject(aggregate),
      broken: () => {
        throw new Error('not configured');
      },
    });
    expect(report.checks.redis!.error).toBe('ECONNREFUSED');
    expect(report.checks.broken!.error).toBe('not configured');
  });

  it('never repeats a secret found in an error', async () => {
    const report = await checkReadiness({
      api: () => Promise.reject(new Error(`refused sk_live_${'a'.repeat(32)} and whsec_${'b'.repeat(43)}`)),
    });
    expect(report.checks.api!.error).toBe('refused sk_live_[redacted] and whsec_[redacted]');
  });
});
