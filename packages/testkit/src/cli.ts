import { execFile } from 'node:child_process';
import { childEnvironment, REPO_ROOT, redisKeyPrefix, runId, TEST_REDIS_URL } from './environment.js';
import { entryArguments } from './process-bundle.js';

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
  /** stdout parsed as JSON (undefined when the command failed). */
  json: any;
  /** stderr parsed as the error document (undefined when the command succeeded). */
  error: { type: string; message: string } | undefined;
}

/**
 * Runs the operator CLI as a real child process, as the container image runs it (the run's
 * bundle, process-bundle.ts): the command's exit code, stdout and stderr come back untouched. Unless `env`
 * says otherwise, it uses the test Redis under this run's key prefix (a token change writes
 * there), never a developer's own keys.
 */
export function runCli(args: string[], env: Record<string, string>): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [...entryArguments('services/cli/src/main.ts'), ...args],
      { cwd: REPO_ROOT, env: childEnvironment({ ...testRedis(), ...env }), maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0;
        if (code === -1) return reject(error ?? new Error('cli did not exit'));
        resolve({
          code,
          stdout,
          stderr,
          json: code === 0 ? JSON.parse(stdout) : undefined,
          error: stderr.trim() ? (JSON.parse(stderr) as { error: CliResult['error'] }).error : undefined,
        });
      },
    );
  });
}

/** The test Redis and this run's key prefix, as the CLI's environment. */
export function testRedis(): { REDIS_URL: string; REDIS_KEY_PREFIX: string } {
  return { REDIS_URL: TEST_REDIS_URL, REDIS_KEY_PREFIX: redisKeyPrefix(runId()) };
}
