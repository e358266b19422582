import { describe, expect, it } from '@jest/globals';
import { TtlCache } from '../src/ttl-cache.js';

/** The in-process caches' one expiry and bound, on a fake clock. */
describe('TtlCache', () => {
  it('returns a value until its lifetime has passed, then drops it', () => {
    const cache = new TtlCache<string>(10);
    cache.set('a', 'one', 1_000, 0);
    expect(cache.get('a', 999)).toBe('one');
    expect(cache.get('a', 1_000)).toBeUndefined();
    expect(cache.size).toBe(0);
  });

  it('keeps null and false as values, apart from a miss', () => {
    const cache = new TtlCache<string | null | false>(10);
    cache.set('unknown', null, 1_000, 0);
    cache.set('off', false, 1_000, 0);
    expect(cache.get('unknown', 1)).toBeNull();
    expect(cache.get('off', 1)).toBe(false);
    expect(cache.get('never', 1)).toBeUndefined();
  });

  it('a lifetime of zero or less keeps nothing', () => {
    const cache = new TtlCache<string>(10);
    cache.set('a', 'one', 0, 5);
    cache.set('b', 'two', -1, 5);
    expect(cache.get('a', 5)).toBeUndefined();
    expect(cache.get('b', 5)).toBeUndefined();
  });

  it('setting a key again replaces its value and lifetime', () => {
    const cache = new TtlCache<string>(10);
    cache.set('a', 'one', 100, 0);
    cache.set('a', 'two', 1_000, 50);
    expect(cache.get('a', 500)).toBe('two');
    expect(cache.size).toBe(1);
  });

  it('stays within its bound by dropping the oldest entry; a key set again is the newest', () => {
    const cache = new TtlCache<number>(3);
    cache.set('a', 1, 1_000, 0);
    cache.set('b', 2, 1_000, 0);
    cache.set('c', 3, 1_000, 0);
    cache.set('a', 10, 1_000, 0);
    cache.set('d', 4, 1_000, 0);
    expect(cache.size).toBe(3);
    expect(cache.get('b', 1)).toBeUndefined();
    expect([cache.get('a', 1), cache.get('c', 1), cache.get('d', 1)]).toEqual([10, 3, 4]);
  });

  it('forgets a deleted key', () => {
    const cache = new TtlCache<number>(3);
    cache.set('a', 1, 1_000, 0);
    cache.delete('a');
    cache.delete('never');
    expect(cache.get('a', 1)).toBeUndefined();
    expect(cache.size).toBe(0);
  });

  it('reads the clock when no time is given', () => {
    const cache = new TtlCache<number>(3);
    cache.set('a', 1, 60_000);
    expect(cache.get('a')).toBe(1);
    cache.set('b', 2, -1);
    expect(cache.get('b')).toBeUndefined();
  });

  it('refuses a bound that is not a positive integer', () => {
    for (const bound of [0, -1, 1.5, Number.NaN]) expect(() => new TtlCache(bound)).toThrow(RangeError);
  });
});
