import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { childEnvironment, REPO_ROOT } from './environment.js';
import { entryArguments } from './process-bundle.js';

/** Ports freePort has given in this process: never given twice. */
const givenPorts = new Set<number>();

/**
 * A port nobody listens on now, on any interface (the services listen with no host), and not
 * one given before by this process: freed at once, a port could be picked again by the next
 * call, and two services started side by side (replicas.test's two APIs) both failed on it
 * with EADDRINUSE. A process that can say where it listens is better started on port 0.
 */
export async function freePort(): Promise<number> {
  for (;;) {
    const port = await new Promise<number>((resolve, reject) => {
      const server = createServer();
      server.unref();
      server.on('error', reject);
      server.listen(0, () => {
        const address = server.address();
        server.close(() =>
          typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port')),
        );
      });
    });
    if (!givenPorts.has(port)) {
      givenPorts.add(port);
      return port;
    }
  }
}

export interface ServiceProcess {
  child: ChildProcess;
  /** Everything the process wrote so far, stdout and stderr interleaved. */
  output(): string;
  /** Resolves when the output matches, rejects when the process exits first or time runs out. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<void>;
  /** Sends the signal and resolves with the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
  exited: Promise<number | null>;
}

/**
 * Starts one of the repository's entry points as a real process: a bundled process (the API, the
 * worker, migrate) as the container image runs it, anything else through tsx (entryArguments).
 */
export function startService(entry: string, env: Record<string, string>): ServiceProcess {
  const child = spawn(process.execPath, entryArguments(entry), {
    cwd: REPO_ROOT,
    // API_INTERNAL_PORT 0: test processes run side by side, and 3002 can be taken only once.
    env: childEnvironment({ API_INTERNAL_PORT: '0', ...env }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const listeners = new Set<() => void>();
  const append = (chunk: Buffer) => {
    output += chunk.toString('utf8');
    for (const listener of listeners) listener();
  };
  child.stdout.on('data', append);
  child.stderr.on('data', append);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));

  return {
    child,
    exited,
    output: () => output,
    waitFor(pattern, timeoutMs = 20_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          if (pattern.test(output)) {
            done();
            resolve();
          }
        };
        const timer = setTimeout(() => {
          done();
          reject(new Error(`timed out waiting for ${pattern} in:\n${output}`));
        }, timeoutMs);
        const done = () => {
          clearTimeout(timer);
          listeners.delete(check);
        };
        void exited.then(() => {
          if (!pattern.test(output)) {
            done();
            reject(new Error(`process exited before ${pattern}:\n${output}`));
          }
        });
        listeners.add(check);
        check();
      });
    },
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}

/** Loaded first in a process started with reportOpenAtExit(); the standard streams do not count. */
const OPEN_AT_EXIT_HOOK = `process.on('exit', () => {
  const open = process.getActiveResourcesInfo().filter((kind) => kind !== 'PipeWrap' && kind !== 'TTYWrap');
  if (open.length > 0) process.stderr.write('open at exit: ' + open.join(', ') + '\\n');
});`;

/**
 * What a service's output says when a failed start left something open: the guard of
 * runServiceStart (packages/runtime/src/service-start.ts), or the report of reportOpenAtExit.
 */
export const LEFT_OPEN = /something was left open|open at exit/;

/**
 * Environment for startService that makes the process write, as it exits, what it still had
 * open besides its standard streams: `open at exit: TCPSocketWrap, Timeout`. A process that
 * ends by itself has nothing open by then; one ended by `process.exit` lists what it left,
 * so a test sees a leak that an early exit would hide.
 */
export function reportOpenAtExit(): Record<string, string> {
  const hook = `--import=data:text/javascript,${encodeURIComponent(OPEN_AT_EXIT_HOOK)}`;
  return { NODE_OPTIONS: [process.env.NODE_OPTIONS, hook].filter(Boolean).join(' ') };
}
