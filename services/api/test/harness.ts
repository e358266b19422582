import { randomBytes } from 'node:crypto';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { afterAll, beforeAll } from '@jest/globals';
import { loadConfig } from '@retention/core';
import { createDb, type Db } from '@retention/db';
import { loadFixtures, type FixtureFile, type FixtureResult } from '@retention/domain';
import { createLogger, waitForRedis, type Redis } from '@retention/runtime';
import { Client, type ClientOptions } from '@retention/sdk';
import {
  redisKeyPrefix,
  runId,
  TEST_REDIS_URL,
  useTestDatabase,
  testSecretsKey,
  testSecretsKeyBytes,
} from '@retention/testkit';
import { createApiRedis } from '../src/api-redis.js';
import { createApp } from '../src/app.js';
import { createApiMetrics } from '../src/metrics.js';
import { createApiServer } from '../src/server.js';

interface ApiResponse {
  status: number;
  headers: Headers;
  text: string;
  body: any;
}

export interface ApiHarness {
  url: string;
  db: Db;
  /** The test database's URL (the one `db` opens): for an operator CLI run beside the API. */
  databaseUrl: string;
  redis: Redis;
  redisKeyPrefix: string;
  /** Log lines the API wrote, parsed. */
  logs(): Array<Record<string, unknown>>;
  get(path: string, token?: string, init?: RequestInit): Promise<ApiResponse>;
  /** The SDK's client for this API: how a customer's code sees it. */
  client(token: string, options?: Omit<ClientOptions, 'token' | 'baseUrl' | 'fetch'>): Client;
  /** The raw response to the latest request of a client made by `client()`: for wire-level checks. */
  lastResponse(): ApiResponse;
  load(file: FixtureFile): Promise<FixtureResult>;
  /** The app's Prometheus text, as its internal port serves it at /metrics. */
  metricsText(): Promise<string>;
}

export interface HarnessOptions {
  rateLimitWindowMs?: number;
  /** How long the API caches a token look-up (10 s by default). */
  tokenLookupMs?: number;
  /** Point the API at a Redis that is not there, to watch it fail open. */
  redisUrl?: string;
  /**
   * Point the API at a database that is not there; a function receives this file's database
   * URL, so a test can route the API to it through a port it opens and closes itself.
   */
  databaseUrl?: string | ((testDatabaseUrl: string) => string);
  /**
   * TRUST_PROXY as the API reads it (`true` is one proxy, a hop count, or proxy subnets), so a
   * test can speak from several client addresses through X-Forwarded-For.
   */
  trustProxy?: boolean | number | string;
  /**
   * More variables for the API's configuration (API_HEADERS_TIMEOUT_MS, ...); a function is
   * read when the API starts, for values known only then (a local Stripe's URL).
   */
  env?: Record<string, string> | (() => Record<string, string>);
}

/**
 * The API over real HTTP on an ephemeral port, backed by this test file's own database and
 * its own Redis key prefix.
 */
export function useApi(options: HarnessOptions = {}): { readonly current: ApiHarness } {
  const database = useTestDatabase();
  let harness: ApiHarness | undefined;
  let server: Server | undefined;
  let redis: Redis | undefined;
  let appDb: Db | undefined;

  beforeAll(async () => {
    const prefix = `${redisKeyPrefix(runId())}-${randomBytes(4).toString('hex')}`;
    const apiDatabaseUrl =
      typeof options.databaseUrl === 'function' ? options.databaseUrl(database.current.url) : options.databaseUrl;
    const config = loadConfig({
      SECRETS_KEY: testSecretsKey(),
      DATABASE_URL: apiDatabaseUrl ?? database.current.url,
      REDIS_URL: options.redisUrl ?? TEST_REDIS_URL,
      REDIS_KEY_PREFIX: prefix,
      TRUST_PROXY: String(options.trustProxy ?? false),
      ...(typeof options.env === 'function' ? options.env() : options.env),
    });
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, callback) {
        lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
        callback();
      },
    });
    const logger = createLogger('api', 'info', sink);
    redis = createApiRedis(config.redisUrl, 'api-test');
    if (!options.redisUrl) await waitForRedis(redis);
    appDb = apiDatabaseUrl ? createDb(apiDatabaseUrl, { poolMax: 2 }) : database.current.db;
    const metrics = createApiMetrics();
    const app = createApp({
      config,
      db: appDb,
      redis,
      logger,
      metrics,
      ...(options.rateLimitWindowMs && { rateLimitWindowMs: options.rateLimitWindowMs }),
      ...(options.tokenLookupMs && { tokenLookupMs: options.tokenLookupMs }),
    });
    server = createApiServer(app, logger, config);
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    let lastResponse: ApiResponse | undefined;
    const recordingFetch: typeof fetch = async (input, init) => {
      const response = await fetch(input, init);
      lastResponse = await readResponse(response.clone());
      return response;
    };
    harness = {
      url,
      metricsText: () => metrics.registry.metrics(),
      db: database.current.db,
      databaseUrl: database.current.url,
      redis,
      redisKeyPrefix: prefix,
      logs: () => lines.map((line) => JSON.parse(line) as Record<string, unknown>),
      async get(path, token, init = {}) {
        const headers = new Headers(init.headers);
        if (token !== undefined) headers.set('authorization', `Bearer ${token}`);
        return readResponse(await fetch(`${url}${path}`, { ...init, headers }));
      },
      client: (token, clientOptions = {}) =>
        new Client({ token, baseUrl: url, ...clientOptions, fetch: recordingFetch }),
      lastResponse() {
        if (!lastResponse) throw new Error('no client of this harness has had a response yet');
        return lastResponse;
      },
      load: (file) => loadFixtures(database.current.db, testSecretsKeyBytes(), file),
    };
  });

  afterAll(async () => {
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
    redis?.disconnect();
    if (options.databaseUrl) await appDb?.destroy();
  });

  return {
    get current() {
      if (!harness) throw new Error('the API harness starts in beforeAll');
      return harness;
    },
  };
}

async function readResponse(response: Response): Promise<ApiResponse> {
  const text = await response.text();
  let body: unknown;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    body = undefined;
  }
  return { status: response.status, headers: response.headers, text, body };
}

/** A workspace with one token of a generous limit, for tests that are not about the limit. */
export async function workspaceWithToken(
  api: ApiHarness,
  extra: Partial<FixtureFile['workspaces'][number]> = {},
  rateLimit = 100_000,
): Promise<{ workspaceId: string; token: string; ids: FixtureResult['workspaces'][string] }> {
  const result = await api.load({
    workspaces: [{ key: 'w', tokens: [{ key: 't', rate_limit: rateLimit }], ...extra }],
  });
  const ids = result.workspaces.w!;
  return { workspaceId: ids.id, token: ids.tokens.t!.token, ids };
}
