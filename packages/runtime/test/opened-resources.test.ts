import { describe, expect, it } from '@jest/globals';
import { OpenedResources } from '../src/index.js';

describe('OpenedResources', () => {
  it('closes what was opened, newest first, when a step fails, and throws the reworded failure', async () => {
    const closed: string[] = [];
    const opened = new OpenedResources();
    expect(opened.add('db', (name) => closed.push(name))).toBe('db');
    opened.add('redis', (name) => Promise.resolve().then(() => closed.push(name)));
    await expect(
      opened.step(
        () => Promise.reject(new Error('refused')),
        (error) => new Error(`cannot reach it: ${(error as Error).message}`),
      ),
    ).rejects.toThrow('cannot reach it: refused');
    expect(closed).toEqual(['redis', 'db']);
  });

  it('returns what a step gives and closes nothing while steps succeed', async () => {
    const closed: string[] = [];
    const opened = new OpenedResources();
    opened.add('db', (name) => closed.push(name));
    await expect(opened.step(() => Promise.resolve(42))).resolves.toBe(42);
    expect(closed).toEqual([]);
  });

  it('goes on closing when one close fails, tells of the failure, and closes each resource once', async () => {
    const closed: string[] = [];
    const failures: unknown[] = [];
    const opened = new OpenedResources((error) => failures.push(error));
    opened.add('db', (name) => closed.push(name));
    opened.add('broken', () => {
      throw new Error('already closed');
    });
    opened.add('server', (name) => closed.push(name));
    await opened.closeAll();
    await opened.closeAll();
    expect(closed).toEqual(['server', 'db']);
    expect(failures).toEqual([new Error('already closed')]);
  });
});
