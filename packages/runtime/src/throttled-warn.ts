import { isNativeError } from 'node:util/types';
import type { Logger } from 'pino';
import { firstCause } from './error-cause.js';

/**
 * Logs a warning about `error` from `source` (a connection, a queue), unless that source
 * already had one in the last interval.
 */
export type ThrottledWarn = (source: string, error: unknown, message: string) => void;

/**
 * Warnings for failures that repeat while a backing service is away: every reconnect
 * attempt of a Redis connection, every poll of a BullMQ queue or worker. Each source gets
 * at most one line per `intervalMs`, which says how many it held back since the last one,
 * so an outage leaves a few readable lines instead of dozens a second. The line carries the
 * error's type, message and code but no stack: a stack of a refused connection is the same
 * network internals every time.
 */
export function throttledWarn(logger: Logger | undefined, intervalMs = 10_000): ThrottledWarn {
  const sources = new Map<string, { loggedAt: number; heldBack: number }>();
  return (source, error, message) => {
    const now = Date.now();
    const last = sources.get(source);
    if (last && now - last.loggedAt < intervalMs) {
      last.heldBack += 1;
      return;
    }
    sources.set(source, { loggedAt: now, heldBack: 0 });
    logger?.warn({ source, error: describe(error), ...(last?.heldBack && { held_back: last.heldBack }) }, message);
  };
}

function describe(failure: unknown): Record<string, unknown> {
  const error = firstCause(failure);
  // Checked by shape, not instanceof: errors from Node's own modules may come from another realm.
  if (!isNativeError(error)) return { message: String(error) };
  const code = 'code' in error && error.code !== undefined ? { code: error.code } : {};
  return { type: error.name, message: error.message, ...code };
}
