import { Redis, type RedisOptions } from 'ioredis';
import type { Logger } from 'pino';
import { firstCause } from './error-cause.js';
import { throttledWarn } from './throttled-warn.js';

export type { Redis } from 'ioredis';

/**
 * Redis connections. Two kinds, because they fail differently on purpose:
 * - `command` connections (rate limit, publishing jobs) fail fast while Redis is away, so a
 *   request is never held hostage by a queue of commands waiting for a reconnect;
 * - `blocking` connections (BullMQ workers) wait and retry forever, as BullMQ requires.
 * Connection errors are logged (at most once per 10 s per connection, see `throttledWarn`),
 * never thrown as unhandled 'error' events.
 *
 * ioredis merges a URL's query options over the options given here, so these hold only
 * because REDIS_URL carries none: loadConfig refuses them (all but `family`) at start.
 */
export function createRedis(
  url: string,
  kind: 'command' | 'blocking',
  name: string,
  logger?: Logger,
  { autoPipelining = false }: { autoPipelining?: boolean } = {},
): Redis {
  const options: RedisOptions =
    kind === 'command'
      ? {
          connectionName: name,
          enableOfflineQueue: false,
          maxRetriesPerRequest: 1,
          connectTimeout: 2_000,
          commandTimeout: 2_000,
          // Commands issued in the same tick go out in one write (see the API's api-redis.ts).
          enableAutoPipelining: autoPipelining,
          retryStrategy: (attempt) => Math.min(attempt * 200, 2_000),
        }
      : {
          connectionName: name,
          maxRetriesPerRequest: null,
          enableReadyCheck: false,
          retryStrategy: (attempt) => Math.min(attempt * 200, 2_000),
        };
  const redis = new Redis(url, options);
  const warn = throttledWarn(logger);
  redis.on('error', (error: Error) => warn(name, error, 'redis connection error'));
  return redis;
}

/**
 * Resolves once the connection is ready; rejects on its first error or after `timeoutMs`. A
 * Redis that answers, only slowly, is not refused for it: a command connection's ready check
 * (an INFO) that runs past its `commandTimeout` fails that connection with "Command timed out",
 * ioredis connects again, and the wait goes on for the next ready, within `timeoutMs` still.
 * (A CI run on an overloaded machine once failed a worker's start on exactly that.)
 */
export function waitForRedis(redis: Redis, timeoutMs = 5_000): Promise<void> {
  if (redis.status === 'ready') return Promise.resolve();
  return new Promise((resolve, reject) => {
    let slowAnswer: Error | undefined;
    const cleanup = () => {
      clearTimeout(timer);
      redis.off('ready', onReady);
      redis.off('error', onError);
    };
    const onReady = () => {
      cleanup();
      resolve();
    };
    const fail = (error: Error) => {
      cleanup();
      reject(error);
    };
    const onError = (error: Error) => {
      if (error.message === COMMAND_TIMED_OUT) slowAnswer = error;
      else fail(error);
    };
    const timer = setTimeout(() => fail(slowAnswer ?? new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
    redis.on('ready', onReady);
    redis.on('error', onError);
  });
}

/** ioredis's message for a command that ran past `commandTimeout` (its Command.ts). */
const COMMAND_TIMED_OUT = 'Command timed out';

/**
 * The `/readyz` check of a Redis connection. A command connection that lost Redis refuses a
 * PING with "Stream isn't writeable and enableOfflineQueue options is false", which says
 * neither where Redis is nor what went wrong; the answer names both instead, as the
 * PostgreSQL check's does (`connect ECONNREFUSED 10.0.3.7:5432`): the address the connection
 * uses (host and port only, so never a password from REDIS_URL) and the last error the
 * connection saw, when it has one.
 */
export function redisReadiness(redis: Redis): () => Promise<unknown> {
  let lastError: unknown;
  redis.on('error', (error: Error) => {
    lastError = error;
  });
  redis.on('ready', () => {
    lastError = undefined;
  });
  return async () => {
    try {
      return await redis.ping();
    } catch (error) {
      const cause = firstCause(lastError ?? error);
      const text = cause instanceof Error ? cause.message || String((cause as { code?: unknown }).code) : String(cause);
      // A connection's error may come wrapped as text ("Error: connect ECONNREFUSED ..."): the driver's words alone.
      const reason = text.replace(/^(?:[A-Za-z]*Error: )+/, '');
      throw new Error(`Redis at ${redisAddress(redis)}: ${reason}`);
    }
  };
}

/** Where the connection goes: `host:port` (`[::1]:6379`), or its Unix socket. */
function redisAddress(redis: Redis): string {
  const { host, port, path } = redis.options;
  if (path) return path;
  return `${host?.includes(':') ? `[${host}]` : host}:${port}`;
}
