import { execFile } from 'node:child_process';
import path from 'node:path';
import { REPO_ROOT } from '@retention/testkit';

export interface ScriptResult {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs a TypeScript file of the repository to completion, as `npx tsx <file>` would from the
 * repository root (where tsconfig maps @retention/sdk to its source).
 */
export function runScript(file: string, env: Record<string, string>, timeoutMs = 60_000): Promise<ScriptResult> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', path.resolve(REPO_ROOT, file)],
      { cwd: REPO_ROOT, env: { ...process.env, ...env }, timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) => {
        const code = error ? error.code : 0;
        if (typeof code !== 'number') return reject(error ?? new Error(`${file} did not exit`));
        resolve({ code, stdout, stderr });
      },
    );
  });
}
