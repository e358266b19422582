import { withoutStatement } from '@retention/db';
import { throttledFailures, type Logger, type ThrottledFailures } from '@retention/runtime';

/**
 * The worker's loops that poll PostgreSQL (processor events, outbox dispatch, the delivery
 * scheduler, backfills, the periodic jobs, LISTEN) fail on every round while it is away: each
 * says so at most once per 10 s, with `held_back`, and once more when it works again (README,
 * "Logs"), as the Redis connections do. The error is told without the statement knex puts
 * before its message (our SQL, with bound values).
 */
export function postgresFailures(logger: Logger): ThrottledFailures {
  const failures = throttledFailures(logger);
  return {
    failed: (source, error, message, fields) => failures.failed(source, withoutStatement(error), message, fields),
    succeeded: (source) => failures.succeeded(source),
  };
}
