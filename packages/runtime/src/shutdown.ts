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
      logger.warn({ signal }, 'signal repeated while stopping: exiting now');
      process.exit(1);
    }
    stoppingSince = Date.now();
    logger.info({ signal }, 'stopping');
    const timer = setTimeout(() => {
      logger.error({ graceMs }, 'did not stop in time: exiting');
      process.exit(1);
    }, graceMs);
    timer.unref();
    stop().then(
      () => {
        logger.info('stopped');
        logger.flush?.();
        process.exit(0);
      },
      (error: unknown) => {
        logger.error({ err: error }, 'failed while stopping');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', handle);
  process.on('SIGINT', handle);
}
