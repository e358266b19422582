import { describe, expect, it } from '@jest/globals';
import { ReadCoalescer } from '../../src/dashboard/coalesce.js';

/** A read that ends when the test says so, recording when it started. */
function controlledReads() {
  const started: number[] = [];
  const finish: Array<(value: string) => void> = [];
  const fail: Array<(error: Error) => void> = [];
  let clock = 0;
  return {
    started,
    tick: () => (clock += 1),
    read: () =>
      new Promise<string>((resolve, reject) => {
        started.push(clock);
        finish.push(resolve);
        fail.push(reject);
      }),
    finish: (index: number, value: string) => finish[index]!(value),
    fail: (index: number, error: Error) => fail[index]!(error),
  };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('ReadCoalescer', () => {
  it('calls during a read share the next read, which starts after they arrived', async () => {
    const coalescer = new ReadCoalescer<string>();
    const reads = controlledReads();
    const first = coalescer.run('w:last_30_days', reads.read);
    await settle();
    reads.tick(); // time 1: these arrive while the first read runs
    const joiners = Array.from({ length: 10 }, () => coalescer.run('w:last_30_days', reads.read));
    await settle();
    expect(reads.started).toEqual([0]);
    reads.tick(); // time 2: the first read ends after the joiners arrived
    reads.finish(0, 'first');
    expect(await first).toBe('first');
    await settle();
    expect(reads.started).toEqual([0, 2]); // one more read, begun after the joiners arrived
    reads.finish(1, 'second');
    expect(await Promise.all(joiners)).toEqual(Array(10).fill('second'));
    await settle();
    expect(coalescer.size).toBe(0);
  });

  it('keeps keys apart, and a call after the last read ends starts its own', async () => {
    const coalescer = new ReadCoalescer<string>();
    const reads = controlledReads();
    const a = coalescer.run('w:all_time', reads.read);
    const b = coalescer.run('v:all_time', reads.read);
    await settle();
    expect(reads.started).toHaveLength(2);
    reads.finish(0, 'a');
    reads.finish(1, 'b');
    expect([await a, await b]).toEqual(['a', 'b']);
    await settle();
    const c = coalescer.run('w:all_time', reads.read);
    await settle();
    expect(reads.started).toHaveLength(3);
    reads.finish(2, 'c');
    expect(await c).toBe('c');
  });

  it('gives a failed read to its callers only; the next read runs afresh', async () => {
    const coalescer = new ReadCoalescer<string>();
    const reads = controlledReads();
    const first = coalescer.run('k', reads.read);
    await settle();
    const joiner = coalescer.run('k', reads.read);
    reads.fail(0, new Error('database down'));
    await expect(first).rejects.toThrow('database down');
    await settle();
    reads.finish(1, 'recovered');
    expect(await joiner).toBe('recovered');
    await settle();
    expect(coalescer.size).toBe(0);
    const thrown = coalescer.run('k', () => {
      throw new Error('synchronous');
    });
    await expect(thrown).rejects.toThrow('synchronous');
    await settle();
    expect(coalescer.size).toBe(0);
  });
});
