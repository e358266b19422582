import { spawn } from 'node:child_process';
import { REPO_ROOT } from '@retention/testkit';

export interface NpmRun {
  /** Everything written so far, stdout and stderr interleaved. */
  output(): string;
  /** Resolves when the output matches; rejects when npm exits first or time runs out. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<void>;
  /** SIGTERM to npm's own pid, as a supervisor or `kill` sends it. */
  terminate(): void;
  /** SIGINT to npm's whole process group, as Ctrl-C in a terminal sends it. */
  interrupt(): void;
  /**
   * SIGTERM to every process left in npm's group, npm gone or not: a test that failed half
   * way leaves nothing running (and an orphaned service is still in the group).
   */
  cleanUp(): void;
  /** npm's exit code. */
  exited: Promise<number | null>;
}

/**
 * `npm run <script>` as a person runs it, npm included: what npm does with signals and exit
 * codes is part of what they see. npm leads a process group of its own, like a terminal's
 * foreground job, so Ctrl-C can be sent to the group.
 */
export function npmRun(script: string, env: Record<string, string>): NpmRun {
  const child = spawn('npm', ['run', '--silent', script], {
    cwd: REPO_ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  let done = false;
  void exited.then(() => (done = true));

  return {
    output: () => output,
    exited,
    async waitFor(pattern, timeoutMs = 60_000) {
      const deadline = Date.now() + timeoutMs;
      while (!pattern.test(output)) {
        if (done) throw new Error(`npm run ${script} exited before ${pattern}:\n${output}`);
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${pattern} in:\n${output}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
    terminate: () => child.kill('SIGTERM'),
    interrupt: () => process.kill(-child.pid!, 'SIGINT'),
    cleanUp() {
      try {
        process.kill(-child.pid!, 'SIGTERM');
      } catch {
        // the group is empty: nothing left to stop
      }
    },
  };
}
