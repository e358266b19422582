import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Logger } from 'pino';

/**
 * Runs `stop` once on SIGTERM or SIGINT, then exits 0 (1 if stopping failed or took longer
 * than `graceMs`). Another signal more than two seconds later, while still stopping, exits at
 * once; closer ones are echoes (Ctrl-C reaches `npm start` and its children together, and
 * the parent forwards it too).
 */
export function onShutdownSignal(logger: Logger, stop: () => Promise<void>, graceMs = 30_000): void {
  let stoppingSince: number | undefined;
  const handle = (signal: NodeJS.Signals) => {
    if (stoppingSince !== undefined) {
      if (Date.now() - stoppingSince < 2_000) return;
      logSafely(() => logger.warn({ signal }, 'signal repeated while stopping: exiting now'));
      process.exit(1);
    }
    stoppingSince = Date.now();
    // The grace timer is armed before anything else runs, and every log call is guarded, so a
    // logger that throws (a closed stdout, say) can never keep the process from exiting.
    const timer = setTimeout(() => {
      logSafely(() => logger.error({ graceMs }, 'did not stop in time: exiting'));
      process.exit(1);
    }, graceMs);
    timer.unref();
    logSafely(() => logger.info({ signal }, 'stopping'));
    Promise.resolve()
      .then(stop)
      .then(
        () => {
          logSafely(() => {
            logger.info('stopped');
            logger.flush?.();
          });
          process.exit(0);
        },
        (error: unknown) => {
          logSafely(() => logger.error({ err: error }, 'failed while stopping'));
          process.exit(1);
        },
      );
  };
  process.on('SIGTERM', handle);
  process.on('SIGINT', handle);
}

function logSafely(write: () => void): void {
  try {
    write();
  } catch {
    // Nothing to report it to: the log itself is what failed.
  }
}

export interface DrainableServer {
  /**
   * Stops accepting connections, lets the requests in flight finish, and resolves once every
   * connection is closed. Kept-alive connections are closed as soon as they fall idle: each
   * response from now on says `Connection: close`, so clients do not wait for Node's
   * keep-alive timeout or send another request on a closing connection.
   */
  drain(): Promise<void>;
}

export function drainable(server: Server): DrainableServer {
  const inFlight = new Set<ServerResponse>();
  let draining = false;
  server.prependListener('request', (_req: IncomingMessage, res: ServerResponse) => {
    if (draining) res.setHeader('Connection', 'close');
    inFlight.add(res);
    res.once('close', () => {
      inFlight.delete(res);
      if (draining) setImmediate(() => server.closeIdleConnections());
    });
  });
  return {
    drain() {
      draining = true;
      const closed = new Promise<void>((resolve, reject) =>
        server.close((error) => (error ? reject(error) : resolve())),
      );
      for (const res of inFlight) if (!res.headersSent) res.setHeader('Connection', 'close');
      server.closeIdleConnections();
      return closed;
    },
  };
}
