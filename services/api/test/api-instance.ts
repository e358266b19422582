import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { afterAll, beforeAll } from '@jest/globals';
import { loadConfig } from '@retention/core';
import { createDb, type Db } from '@retention/db';
import { createLogger, waitForRedis, type Redis } from '@retention/runtime';
import {
  redisKeyPrefix,
  runId,
  TEST_REDIS_URL,
  useTestDatabase,
  type TestDatabase,
  testSecretsKey,
} from '@retention/testkit';
import { createApiRedis } from '../src/api-redis.js';
import { createApp } from '../src/app.js';
import { createApiMetrics, type ApiMetrics } from '../src/metrics.js';
import { RefusalCounter } from '../src/processor/refusal-counter.js';
import { createInternalServer } from '../src/routes/operational.js';
import { createApiServer } from '../src/server.js';
import { withSecurityHeaders } from '../src/security-headers.js';

export interface Reply {
  status: number;
  headers: Headers;
  text: string;
  body: any;
}

export interface ApiInstance {
  url: string;
  metrics: ApiMetrics;
  logs(): Array<Record<string, unknown>>;
  get(path: string, token?: string, init?: RequestInit): Promise<Reply>;
  /** A GET on the internal port (API_INTERNAL_PORT): /healthz, /readyz, /metrics. */
  internal(path: string): Promise<Reply>;
  close(): Promise<void>;
}

export interface InstanceOptions {
  /** The API's own database; a URL where nothing listens makes every query fail. */
  databaseUrl: string;
  /** Where the API finds Redis; the test Redis unless told otherwise. */
  redisUrl?: string;
  baseUrl?: string;
  /** Serve the app on a bare node:http server, as Express alone: without createApiServer's door before it. */
  expressOnly?: boolean;
  /** More environment for the API's configuration, over the defaults above (SECRETS_KEY_PREVIOUS, ...). */
  env?: Record<string, string>;
}

/** One API app over real HTTP on an ephemeral port, with its own pool, Redis prefix and metrics. */
export async function startApiInstance(options: InstanceOptions): Promise<ApiInstance> {
  const config = loadConfig({
    SECRETS_KEY: testSecretsKey(),
    DATABASE_URL: options.databaseUrl,
    REDIS_URL: options.redisUrl ?? TEST_REDIS_URL,
    REDIS_KEY_PREFIX: `${redisKeyPrefix(runId())}-${randomBytes(4).toString('hex')}`,
    ...(options.baseUrl && { BASE_URL: options.baseUrl }),
    ...options.env,
  });
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
      callback();
    },
  });
  const logger = createLogger('api', 'debug', sink);
  const redis: Redis = createApiRedis(config.redisUrl, 'api-instance-test');
  if (!options.redisUrl) await waitForRedis(redis);
  const db: Db = createDb(config.databaseUrl, { poolMax: 4 });
  const metrics = createApiMetrics();
  const refusals = new RefusalCounter(db, logger);
  const app = createApp({ config, db, redis, logger, metrics, refusals });
  const server: Server = options.expressOnly
    ? createServer(withSecurityHeaders(config.baseUrl, app))
    : createApiServer(app, logger, config);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const internal = createInternalServer({ db, redis, metrics });
  await new Promise<void>((resolve) => internal.listen(0, '127.0.0.1', resolve));
  const internalUrl = `http://127.0.0.1:${(internal.address() as AddressInfo).port}`;
  return {
    url,
    metrics,
    logs: () => lines.map((line) => JSON.parse(line) as Record<string, unknown>),
    get: (path, token, init) => request(url, path, token, init),
    internal: (path) => request(internalUrl, path),
    async close() {
      internal.closeAllConnections();
      await new Promise<void>((resolve) => internal.close(() => resolve()));
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      redis.disconnect();
      await refusals.close();
      await db.destroy();
    },
  };
}

async function request(url: string, path: string, token?: string, init: RequestInit = {}): Promise<Reply> {
  const headers = new Headers(init.headers);
  if (token !== undefined) headers.set('authorization', `Bearer ${token}`);
  const response = await fetch(`${url}${path}`, { ...init, headers });
  const text = await response.text();
  let body: unknown;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    body = undefined;
  }
  return { status: response.status, headers: response.headers, text, body };
}

/** A test database of this file's own and an API instance on it, for the life of the file. */
export function useApiInstance(options: Omit<InstanceOptions, 'databaseUrl'> = {}): {
  readonly database: TestDatabase;
  readonly api: ApiInstance;
} {
  const database = useTestDatabase();
  let api: ApiInstance | undefined;
  beforeAll(async () => {
    api = await startApiInstance({ ...options, databaseUrl: database.current.url });
  });
  afterAll(async () => {
    await api?.close();
  });
  return {
    get database() {
      return database.current;
    },
    get api() {
      if (!api) throw new Error('the API instance starts in beforeAll');
      return api;
    },
  };
}
