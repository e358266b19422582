import { describe, expect, it } from '@jest/globals';
import { firstUse } from '../src/first-use.js';

describe('firstUse', () => {
  it('makes the value once, and callers that ask meanwhile share that attempt', async () => {
    let made = 0;
    const value = firstUse(async () => {
      made += 1;
      await new Promise((resolve) => setTimeout(resolve, 5));
      return { made };
    });
    const [first, second] = await Promise.all([value(), value()]);
    const third = await value();
    expect(made).toBe(1);
    expect(second).toBe(first);
    expect(third).toBe(first);
  });

  it('does not keep a failure: the callers of that attempt see it, the next use tries again', async () => {
    let calls = 0;
    const value = firstUse(() => {
      calls += 1;
      return calls === 1 ? Promise.reject(new Error('EMFILE: too many open files')) : Promise.resolve('loaded');
    });
    const failed = await Promise.allSettled([value(), value()]);
    expect(failed.map((result) => result.status)).toEqual(['rejected', 'rejected']);
    expect(calls).toBe(1);
    await expect(value()).resolves.toBe('loaded');
    await expect(value()).resolves.toBe('loaded');
    expect(calls).toBe(2);
  });
});
