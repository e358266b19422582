import { setTimeout as sleep } from 'node:timers/promises';
import { isConnectionError } from './connection.js';

export interface RetryWhileUnreachableOptions {
  /** How long to keep trying, from the first attempt. */
  forMs: number;
  everyMs?: number;
  /** Told about each failure that will be retried. */
  onRetry?: (error: unknown) => void;
}

/**
 * Runs `attempt` until it succeeds, trying again while its error says the server cannot be
 * reached yet (refused, unknown host, still starting up), for up to `forMs`. Any other
 * error, or the last one once time is up, is thrown. For a process started beside its
 * database: under docker compose the server can look healthy a moment before it accepts
 * TCP connections.
 */
export async function retryWhileUnreachable<T>(
  attempt: () => Promise<T>,
  { forMs, everyMs = 1_000, onRetry }: RetryWhileUnreachableOptions,
): Promise<T> {
  const deadline = Date.now() + forMs;
  for (;;) {
    try {
      return await attempt();
    } catch (error) {
      if (!isConnectionError(error) || Date.now() + everyMs > deadline) throw error;
      onRetry?.(error);
      await sleep(everyMs);
    }
  }
}
