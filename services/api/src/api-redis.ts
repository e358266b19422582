import { createRedis, type Logger, type Redis } from '@retention/runtime';

/**
 * The API's Redis connection: a fail-fast `command` connection (the rate limit must never queue
 * behind a reconnect) with ioredis's auto-pipelining, so that the rate-limit checks of requests
 * handled in the same tick go to Redis in one write and come back in one read. Measured with
 * `npm run bench:api` (customers page, five pairs of runs in turn): 0.73 to 0.76 of the
 * baseline with it, 0.66 to 0.73 without (docs/performance.md, "The rate-limit call").
 */
export function createApiRedis(url: string, name: string, logger?: Logger): Redis {
  return createRedis(url, 'command', name, logger, { autoPipelining: true });
}
