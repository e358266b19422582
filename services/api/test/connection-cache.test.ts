import { describe, expect, it } from '@jest/globals';
import { ConnectionCache } from '../src/processor/connection-cache.js';

/** The receive route's connection cache, on a fake clock: a read a second per id, bounded. */
describe('ConnectionCache', () => {
  const row = (id: string) => ({ connection: { id } as never, webhookSecret: `whsec_${id}` });

  function cacheWith(found: (id: string) => ReturnType<typeof row> | null) {
    let now = 0;
    const reads: string[] = [];
    const cache = new ConnectionCache(
      (id) => {
        reads.push(id);
        return Promise.resolve(found(id));
      },
      { ttlMs: 1_000, maxEntries: 3, now: () => now },
    );
    return { cache, reads, advance: (ms: number) => (now += ms) };
  }

  it('reads a connection once a second, then again', async () => {
    const { cache, reads, advance } = cacheWith(row);
    await expect(cache.get('a')).resolves.toEqual(row('a'));
    advance(999);
    await cache.get('a');
    expect(reads).toEqual(['a']);
    advance(1);
    await cache.get('a');
    expect(reads).toEqual(['a', 'a']);
  });

  it('keeps an unknown id as null for the second too', async () => {
    const { cache, reads } = cacheWith(() => null);
    await expect(cache.get('x')).resolves.toBeNull();
    await expect(cache.get('x')).resolves.toBeNull();
    expect(reads).toEqual(['x']);
  });

  it('stays within its bound by dropping its oldest entry when full', async () => {
    const { cache, reads } = cacheWith(row);
    for (const id of ['a', 'b', 'c', 'd']) await cache.get(id);
    await cache.get('b');
    await cache.get('a');
    expect(reads).toEqual(['a', 'b', 'c', 'd', 'a']);
  });
});
