import type { Server } from 'node:net';
import { OpenedResources } from './opened-resources.js';

/** How long a failed start may take to end by itself before it is ended, saying so. */
const EXIT_GRACE_MS = 5_000;

/**
 * Runs the start of a service (the API, the worker). `start` opens what the process needs and
 * adds each resource to `opened` the moment it exists. The whole start is one step, so
 * whatever fails in it, a synchronous throw included (a constructor refusing a setting),
 * closes everything opened before the failure, newest first.
 *
 * A failed start writes `NAME failed to start: MESSAGE` on stderr and sets exit code 1; the
 * process then ends by itself once its last socket is gone, not through `process.exit`, which
 * would hide a leak. Were something left open, a guard ends it anyway 5 s later, and says so.
 */
export function runServiceStart(name: string, start: (opened: OpenedResources) => Promise<void>): void {
  const opened = new OpenedResources();
  opened
    .step(() => start(opened))
    .catch((error: unknown) => {
      process.stderr.write(`${name} failed to start: ${error instanceof Error ? error.message : String(error)}\n`);
      process.exitCode = 1;
      setTimeout(() => {
        process.stderr.write(
          `${name}: still running ${EXIT_GRACE_MS} ms after a failed start (something was left open); exiting\n`,
        );
        process.exit(1);
      }, EXIT_GRACE_MS).unref();
    });
}

/**
 * Listens on `port`. A failure names the variable the port came from, so the operator knows
 * what to change: `cannot listen on WORKER_PORT 3001: listen EADDRINUSE ...`.
 */
export function listenOn(server: Server, port: number, variable: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', (error) => reject(new Error(`cannot listen on ${variable} ${port}: ${error.message}`)));
    server.listen(port, resolve);
  });
}
