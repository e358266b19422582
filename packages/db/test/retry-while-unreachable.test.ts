import { describe, expect, it } from '@jest/globals';
import { ensureDatabase } from '@retention/db';
import { freePort } from '@retention/testkit';
import { retryWhileUnreachable } from '../src/retry-while-unreachable.js';

// A server that opens later, end to end, is in test/deployment.test.ts (`migrate --wait`).

const refused = () => Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
const startingUp = () => Object.assign(new Error('the database system is starting up'), { code: '57P03' });

describe('retryWhileUnreachable', () => {
  it('tries again while the server cannot be reached or is starting up, and returns the first success', async () => {
    const failures = [refused(), startingUp()];
    const retried: unknown[] = [];
    const result = await retryWhileUnreachable(
      () => {
        const failure = failures.shift();
        return failure ? Promise.reject(failure) : Promise.resolve('migrated');
      },
      { forMs: 5_000, everyMs: 10, onRetry: (error) => retried.push(error) },
    );
    expect(result).toBe('migrated');
    expect(retried).toMatchObject([{ code: 'ECONNREFUSED' }, { code: '57P03' }]);
  });

  it('gives up with the connection error once its time is up', async () => {
    const url = `postgres://127.0.0.1:${await freePort()}/none`;
    const started = Date.now();
    await expect(
      retryWhileUnreachable(() => ensureDatabase(url), { forMs: 1_000, everyMs: 200 }),
    ).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    expect(Date.now() - started).toBeGreaterThanOrEqual(700);
    expect(Date.now() - started).toBeLessThan(3_000);
  });

  it('does not retry an error that is not about reaching the server', async () => {
    let attempts = 0;
    const unknownRole = Object.assign(new Error('role "nobody" does not exist'), { code: '28000' });
    await expect(
      retryWhileUnreachable(
        () => {
          attempts += 1;
          return Promise.reject(unknownRole);
        },
        { forMs: 5_000, everyMs: 10 },
      ),
    ).rejects.toBe(unknownRole);
    expect(attempts).toBe(1);
  });
});
