import {
  apiErrorFor,
  ConnectionError,
  DatabaseError,
  InvalidParamError,
  RateLimitError,
  RetentionError,
  UnexpectedResponseError,
} from './errors.js';
import { SDK_VERSION } from './version.js';

export interface TransportOptions {
  token: string;
  baseUrl: string;
  maxRetryWaitSeconds?: number;
  maxRetries?: number;
  timeoutSeconds?: number;
  fetch?: typeof fetch;
}

/**
 * The rate-limit headers of one response (the API reference, "Rate limits"). Frozen, and the same object until
 * the next response arrives, so `!==` tells whether a request was made since.
 */
export interface RateLimitInfo {
  /** Requests allowed per minute. */
  readonly limit: number;
  /** Requests left in the current (sliding) window. */
  readonly remaining: number;
  /** Seconds until the oldest counted request leaves the window. */
  readonly resetSeconds: number;
}

const DEFAULTS = {
  maxRetryWaitSeconds: 60,
  maxRetries: 3,
  timeoutSeconds: 30,
} as const;

const BACKOFF_BASE_MS = 500;
const BACKOFF_CAP_MS = 8_000;
const BODY_EXCERPT_CHARS = 500;
/** Gateways that answer for an API that is restarting or overloaded: worth another try. */
const RETRYABLE_GATEWAY_STATUSES = new Set([502, 503, 504]);

/**
 * The API sends this header on every answer under /api/v1, errors included. An error document
 * without it is not the API's, however alike: the dashboard's own API answers a wrong
 * baseUrl (`…/dashboard`) with an `authentication_required` of its own.
 */
const API_VERSION_HEADER = 'retention-api-version';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * What a successful answer must be: the value of its `object` field, and for a `list` the
 * envelope that pagination reads. A cheap check of the shape, not a validation of every field.
 */
export type ExpectedObject = 'list' | 'customer' | 'recovery_campaign' | 'stats';

/**
 * Sends GET requests to the API and turns every answer into a value or a RetentionError.
 * Retries (GET is idempotent, so every retry is safe): any 429 (the API's, or a gateway's
 * without the API's JSON) after its Retry-After; a 500 database_error, a gateway error or a
 * network failure with exponential back-off, at most `maxRetries` times. All waits of one
 * call together never exceed `maxRetryWaitSeconds`: a wait that would is not started, and the
 * error is thrown at once instead.
 */
export class Transport {
  readonly #token: string;
  readonly #apiRoot: URL;
  readonly #maxWaitMs: number;
  readonly #maxRetries: number;
  readonly #timeoutMs: number;
  readonly #fetch: typeof fetch;
  #rateLimit: RateLimitInfo | null = null;

  constructor(options: TransportOptions) {
    if (typeof options !== 'object' || options === null) throw new TypeError('new Client() needs an options object.');
    this.#token = checkToken(options.token);
    this.#apiRoot = apiRootOf(options.baseUrl);
    this.#maxWaitMs =
      1000 * nonNegative('maxRetryWaitSeconds', options.maxRetryWaitSeconds, DEFAULTS.maxRetryWaitSeconds);
    this.#maxRetries = Math.floor(nonNegative('maxRetries', options.maxRetries, DEFAULTS.maxRetries));
    this.#timeoutMs = 1000 * nonNegative('timeoutSeconds', options.timeoutSeconds, DEFAULTS.timeoutSeconds);
    if (this.#timeoutMs === 0) throw new TypeError('timeoutSeconds must be greater than 0.');
    if (options.fetch !== undefined && typeof options.fetch !== 'function') {
      throw new TypeError('fetch must be a function with the signature of the global fetch.');
    }
    // The global is looked up per request, so code that replaces it later is honoured.
    this.#fetch = options.fetch ?? ((input, init) => fetch(input, init));
  }

  get rateLimit(): RateLimitInfo | null {
    return this.#rateLimit;
  }

  async get<T>(path: string, expected: ExpectedObject, query: object = {}): Promise<T> {
    const url = this.#url(path, query);
    let waitedMs = 0;
    let retries = 0;
    for (;;) {
      try {
        return (await this.#send(url, expected)) as T;
      } catch (error) {
        const isBackoffRetry = this.#isRetryableFailure(error);
        const delay = isRateLimited(error)
          ? 1000 * Math.max(1, error.retryAfterSeconds ?? 1)
          : isBackoffRetry && retries < this.#maxRetries
            ? backoffMs(retries)
            : null;
        if (delay === null || waitedMs + delay > this.#maxWaitMs) throw error;
        if (isBackoffRetry) retries += 1;
        waitedMs += delay;
        await sleep(delay);
      }
    }
  }

  #isRetryableFailure(error: unknown): boolean {
    return (
      error instanceof DatabaseError ||
      error instanceof ConnectionError ||
      (error instanceof RetentionError && error.status !== null && RETRYABLE_GATEWAY_STATUSES.has(error.status))
    );
  }

  #url(path: string, query: object): URL {
    const url = new URL(this.#apiRoot.href + path);
    for (const [name, value] of Object.entries(query) as Array<[string, unknown]>) {
      const text = queryText(name, value);
      if (text !== undefined) url.searchParams.append(name, text);
    }
    return url;
  }

  async #send(url: URL, expected: ExpectedObject): Promise<unknown> {
    let response: Response;
    let text: string;
    try {
      response = await this.#fetch(url, {
        method: 'GET',
        headers: {
          authorization: `Bearer ${this.#token}`,
          accept: 'application/json',
          'user-agent': `retention-sdk-node/${SDK_VERSION} node/${process.version}`,
        },
        // A redirect would carry the token to wherever it points: report it instead.
        redirect: 'manual',
        signal: AbortSignal.timeout(this.#timeoutMs),
      });
      text = await response.text();
    } catch (error) {
      const timedOut = fieldOf(error, 'name') === 'TimeoutError';
      throw new ConnectionError(
        timedOut
          ? `No answer from ${url.origin} within ${this.#timeoutMs / 1000} s.`
          : `Could not reach the API at ${url.origin}: ${describeNetworkError(error)}.`,
        timedOut,
        { cause: error },
      );
    }

    const requestId = response.headers.get('request-id');
    this.#rateLimit = rateLimitOf(response.headers);
    const unexpected = (message: string) =>
      new UnexpectedResponseError({
        message,
        status: response.status,
        requestId,
        body: text.slice(0, BODY_EXCERPT_CHARS),
        retryAfterSeconds: retryAfterSeconds(response.headers.get('retry-after')),
      });

    if (response.status >= 300 && response.status < 400) {
      throw unexpected(
        `The API answered ${response.status} redirecting to ${response.headers.get('location') ?? '(nowhere)'}; ` +
          'redirects are not followed: set baseUrl to the address the API is served at.',
      );
    }
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      throw unexpected(
        `Expected JSON from ${url.origin}${url.pathname} but got HTTP ${response.status} ` +
          `(${response.headers.get('content-type') ?? 'no content type'}); is baseUrl right?`,
      );
    }
    if (response.ok) {
      const problem = shapeProblem(body, expected);
      if (problem) throw unexpected(`${problem} from ${url.pathname}: is baseUrl right?`);
      return body;
    }
    const error = errorDocument(body);
    if (!error) throw unexpected(`HTTP ${response.status} without the API's error document.`);
    if (response.headers.get(API_VERSION_HEADER) === null) {
      throw unexpected(
        `HTTP ${response.status} from ${url.origin}${url.pathname} is not an answer of the API ` +
          `(no ${API_VERSION_HEADER} header): is baseUrl right? It is where the service runs, such as https://retention.example.com.`,
      );
    }
    throw apiErrorFor({
      ...error,
      status: response.status,
      requestId,
      retryAfterSeconds: retryAfterSeconds(response.headers.get('retry-after')),
    });
  }
}

/** A 429 from the API (RateLimitError) or from a gateway in front of it (UnexpectedResponseError). */
function isRateLimited(error: unknown): error is RateLimitError | UnexpectedResponseError {
  return (error instanceof RateLimitError || error instanceof UnexpectedResponseError) && error.status === 429;
}

/** Why a 2xx body is not the document asked for; null when it is. */
function shapeProblem(body: unknown, expected: ExpectedObject): string | null {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return 'Expected a JSON object';
  const document = body as Record<string, unknown>;
  if (document.object !== expected) {
    return `Expected an object of type "${expected}" but got ${JSON.stringify(document.object) ?? 'none'}`;
  }
  const isList =
    Array.isArray(document.data) &&
    typeof document.has_more === 'boolean' &&
    (document.next_cursor === null || typeof document.next_cursor === 'string');
  return expected === 'list' && !isList ? 'Expected a list of data, has_more and next_cursor' : null;
}

/** An id for a path segment: encoded, and never a dot segment that URL parsing would remove. */
export function pathSegment(id: unknown): string {
  if (typeof id !== 'string') throw new TypeError(`An id must be a string, got ${typeof id}.`);
  if (id === '' || id === '.' || id === '..') {
    // The API would answer this, but the URL cannot carry it: `/customers/..` means `/`.
    throw new InvalidParamError({
      type: 'invalid_param',
      message: `Invalid id ${JSON.stringify(id)}: must be a UUID.`,
      status: 400,
      requestId: null,
    });
  }
  return encodeURIComponent(id);
}

function checkToken(token: unknown): string {
  if (typeof token !== 'string' || token === '') {
    throw new TypeError('new Client() needs `token`: an API token (sk_live_...) from Settings, API tokens.');
  }
  if (!/^[\x21-\x7e]+$/.test(token)) {
    throw new TypeError('The API token contains spaces or other characters no token has: check how it was copied.');
  }
  return token;
}

function apiRootOf(baseUrl: unknown): URL {
  let url: URL;
  try {
    url = new URL(String(baseUrl));
  } catch {
    throw new TypeError(
      `baseUrl must be an absolute URL such as https://retention.example.com, got ${String(baseUrl)}.`,
    );
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new TypeError(`baseUrl must use https:// (or http:// for a local API), got ${url.protocol}.`);
  }
  if (url.search || url.hash || url.username || url.password) {
    throw new TypeError('baseUrl must not carry a query string, a fragment or credentials.');
  }
  const path = url.pathname.replace(/\/+$/, '');
  url.pathname = path.endsWith('/api/v1') ? path : `${path}/api/v1`;
  return url;
}

function nonNegative(name: string, value: unknown, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
    throw new TypeError(`${name} must be a number of 0 or more, got ${JSON.stringify(value) ?? typeof value}.`);
  }
  return value;
}

function queryText(name: string, value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (value instanceof Date) {
    if (Number.isNaN(value.getTime())) throw new TypeError(`Query parameter ${name} is an invalid Date.`);
    return value.toISOString();
  }
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') return String(value);
  throw new TypeError(
    `Query parameter ${name} must be a string, got ${Array.isArray(value) ? 'an array' : typeof value}.`,
  );
}

/** Exponential back-off with "equal jitter": at least half of each step, so retries spread out but never bunch at 0. */
function backoffMs(retry: number): number {
  const step = Math.min(BACKOFF_CAP_MS, BACKOFF_BASE_MS * 2 ** retry);
  return Math.round(step / 2 + (Math.random() * step) / 2);
}

/** fetch's "fetch failed" says nothing: the reason (ECONNREFUSED, a TLS failure, ...) is its cause. */
function describeNetworkError(error: unknown): string {
  const cause: unknown = fieldOf(error, 'cause') ?? error;
  const message = fieldOf(cause, 'message');
  const code = fieldOf(cause, 'code');
  if (typeof message !== 'string') return 'unknown network error';
  return typeof code === 'string' && !message.includes(code) ? `${code} ${message}` : message;
}

/**
 * A field of a thrown value, read without `instanceof Error`: errors raised by Node's fetch
 * may come from another realm (a vm context, a test runner) where that check fails.
 */
function fieldOf(value: unknown, field: 'name' | 'message' | 'code' | 'cause'): unknown {
  return typeof value === 'object' && value !== null && field in value
    ? (value as Record<typeof field, unknown>)[field]
    : undefined;
}

function rateLimitOf(headers: Headers): RateLimitInfo | null {
  const [limit, remaining, resetSeconds] = ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset'].map(
    (name) => wholeNumber(headers.get(name)),
  );
  if (limit === undefined || remaining === undefined || resetSeconds === undefined) return null;
  return Object.freeze({ limit, remaining, resetSeconds });
}

function wholeNumber(text: string | null): number | undefined {
  return text !== null && /^\d{1,10}$/.test(text.trim()) ? Number(text.trim()) : undefined;
}

/** Retry-After is seconds (what the API sends) or an HTTP date (what a proxy may send). */
function retryAfterSeconds(text: string | null): number | null {
  if (text === null) return null;
  const seconds = wholeNumber(text);
  if (seconds !== undefined) return seconds;
  const date = Date.parse(text);
  return Number.isNaN(date) ? null : Math.max(0, Math.ceil((date - Date.now()) / 1000));
}

function errorDocument(body: unknown): { type: string; message: string } | undefined {
  if (typeof body !== 'object' || body === null || !('error' in body)) return undefined;
  const { error } = body;
  if (typeof error !== 'object' || error === null) return undefined;
  const type = 'type' in error ? error.type : undefined;
  const message = 'message' in error ? error.message : undefined;
  return typeof type === 'string' && typeof message === 'string' ? { type, message } : undefined;
}
