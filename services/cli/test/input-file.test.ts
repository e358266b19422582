import { access, constants, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { fileProblem, readInputFile } from '../src/input-file.js';

describe('files named on the command line', () => {
  it('reads a file, and refuses a missing file or a directory as invalid_param naming the path', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'input-file-'));
    const file = path.join(dir, 'f.json');
    await writeFile(file, '{"a":1}');
    expect(await readInputFile(file)).toBe('{"a":1}');
    await expect(readInputFile(path.join(dir, 'none.json'))).rejects.toMatchObject({
      type: 'invalid_param',
      message: `cannot read ${path.join(dir, 'none.json')}: no such file`,
    });
    await expect(readInputFile(dir)).rejects.toMatchObject({
      type: 'invalid_param',
      message: `cannot read ${dir}: it is a directory, not a file`,
    });
    await expect(readInputFile(path.join(file, 'below'))).rejects.toMatchObject({ type: 'invalid_param' });
  });

  it('calls a permission failure what it is', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'input-file-'));
    const file = path.join(dir, 'plain.json');
    await writeFile(file, '{}', { mode: 0o644 });
    // A real EACCES even for root (who may read anything): no one may execute a file without an x bit.
    const denied = await access(file, constants.X_OK).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(denied).toMatchObject({ code: 'EACCES' });
    expect(fileProblem(denied)).toBe('permission denied');
    expect(fileProblem(new Error('not a file system error'))).toBeUndefined();
  });
});
