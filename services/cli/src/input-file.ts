import { readFile } from 'node:fs/promises';
import { invalidParam } from '@retention/core';

/** Why a file named on the command line cannot be read, in the operator's words, by errno code. */
const FILE_PROBLEMS: Record<string, string> = {
  ENOENT: 'no such file',
  ENOTDIR: 'a part of the path is not a directory',
  EISDIR: 'it is a directory, not a file',
  EACCES: 'permission denied',
  EPERM: 'permission denied',
};

/** The operator's words for a file system error, or undefined when it is not the operator's doing. */
export function fileProblem(error: unknown): string | undefined {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return code === undefined ? undefined : FILE_PROBLEMS[code];
}

/** Reads a file named on the command line: one that cannot be read is the operator's mistake. */
export async function readInputFile(path: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    const problem = fileProblem(error);
    if (problem) throw invalidParam(`cannot read ${path}: ${problem}`);
    throw error;
  }
}
