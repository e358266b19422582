import { withoutStatement } from '@retention/db';
import { throttledFailures, type Logger, type ThrottledFailures } from '@retention/runtime';

/**
 * The worker's loops that poll PostgreSQL (processor events, outbox dispatch, the delivery
 * scheduler, backfills, the periodic jobs, LISTEN) fail on every round while it is away: each
 * says so at most once per 10 s, with `held_back`, and once more when it works again (README,
 * "Logs"), as the Redis connections do. The error is told without the statement knex puts
 * before its message (our SQL, with bound values). A JavaScript error of our own code (a
 * TypeError, say: a bug, not an outage) keeps its stack, which is what finds it; an outage's
 * errors (the driver's, the pool's) are told without one, the same network internals each time.
 */
export function postgresFailures(logger: Logger): ThrottledFailures {
  const failures = throttledFailures(logger);
  return {
    failed: (source, error, message, fields) =>
      failures.failed(source, withoutStatement(error), message, {
        ...fields,
        ...(isProgrammingError(error) && { stack: error.stack }),
      }),
    succeeded: (source) => failures.succeeded(source),
  };
}

function isProgrammingError(error: unknown): error is Error {
  return (
    error instanceof TypeError ||
    error instanceof RangeError ||
    error instanceof ReferenceError ||
    error instanceof SyntaxError
  );
}
