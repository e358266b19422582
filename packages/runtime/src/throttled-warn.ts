import { isNativeError } from 'node:util/types';
import type { Logger } from 'pino';
import { firstCause } from './error-cause.js';

/**
 * Logs a warning about `error` from `source` (a connection, a queue), unless that source
 * already had one in the last interval.
 */
/** Returns whether it logged (false: held back). */
export type ThrottledWarn = (
  source: string,
  error: unknown,
  message: string,
  fields?: Record<string, unknown>,
) => boolean;

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
  return (source, error, message, fields) => {
    const now = Date.now();
    const last = sources.get(source);
    if (last && now - last.loggedAt < intervalMs) {
      last.heldBack += 1;
      return false;
    }
    sources.set(source, { loggedAt: now, heldBack: 0 });
    logger?.warn(
      { source, ...fields, error: describe(error), ...(last?.heldBack && { held_back: last.heldBack }) },
      message,
    );
    return true;
  };
}

function describe(failure: unknown): Record<string, unknown> {
  const error = firstCause(failure);
  // Checked by shape, not instanceof: errors from Node's own modules may come from another realm.
  if (!isNativeError(error)) return { message: String(error) };
  const code = 'code' in error && error.code !== undefined ? { code: error.code } : {};
  return { type: error.name, message: error.message, ...code };
}

/**
 * throttledWarn for loops whose every round fails while PostgreSQL is away (the worker's
 * processor events, outbox dispatch, delivery scheduler, sweeps, backfills, LISTEN), with one
 * more line when a source works again: an outage reads as "failing (detail) ... N held back
 * ... working again after N failures", not a line per round.
 */
export interface ThrottledFailures {
  /** A round of `source` failed: warned about at most once per interval, as throttledWarn does. */
  failed(source: string, error: unknown, message: string, fields?: Record<string, unknown>): void;
  /** A round of `source` succeeded: when it had been failing, says so once. */
  succeeded(source: string): void;
}

export function throttledFailures(logger: Logger, intervalMs = 10_000): ThrottledFailures {
  const failing = new Map<string, { since: number; failures: number; told: boolean }>();
  const warn = throttledWarn(logger, intervalMs);
  return {
    failed(source, error, message, fields) {
      let run = failing.get(source);
      if (!run) failing.set(source, (run = { since: Date.now(), failures: 0, told: false }));
      run.failures += 1;
      if (warn(source, error, message, fields)) run.told = true;
    },
    succeeded(source) {
      const run = failing.get(source);
      if (!run) return;
      failing.delete(source);
      // A run none of whose failures was logged (held back, a source that fails and works by
      // turns) ends silently: its failures are counted in the next warning's held_back. So a
      // flapping source, too, logs at most a warning and a recovery per interval.
      if (!run.told) return;
      logger.info(
        { source, failures: run.failures, failed_for_ms: Date.now() - run.since },
        `${source}: working again after ${run.failures} failed rounds`,
      );
    },
  };
}
