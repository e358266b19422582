import { isIP } from 'node:net';
import { userInfo } from 'node:os';
import { parseDuration, parseDurationList } from './durations.js';
import { secretsKeyring, type SecretsKeyring } from './secrets-keyring.js';
import { isLocalHost } from './local-hosts.js';

/**
 * Process configuration, read once at start from the environment (operator-cli.md). Every
 * process reads the same names; an invalid value stops the process with a ConfigError that
 * names the variable.
 */

export const DEFAULT_RETRY_SCHEDULE = '5s,5m,30m,2h,5h,10h,14h,20h,24h';
/**
 * Each retry waits its delay stretched by 0 to this fraction at random, never shortened
 * (services/worker's retry schedule), so receivers that failed together are not retried in
 * one burst. Here so the API reference states the same figure.
 */
export const RETRY_JITTER = 0.1;
/** Defaults the demo's history replays (packages/domain/src/demo), as the worker would have run. */
export const DEFAULT_STALE_CAMPAIGN_DAYS = 30;
export const DEFAULT_STALE_CAMPAIGN_CHECK_INTERVAL = '10m';
export const DEFAULT_WEBHOOK_LOG_RETENTION_DAYS = 90;
export const DEFAULT_PROCESSOR_EVENT_RETENTION_DAYS = 90;
/**
 * Stripe resends an event up to 30 days after its `created` (the Dashboard's Resend, `stripe
 * events resend`); an event whose row was deleted is new again to the inbox and would be
 * applied a second time, so finished events are kept at least a day longer than that.
 */
export const MIN_PROCESSOR_EVENT_RETENTION_DAYS = 31;

export interface Config {
  databaseUrl: string;
  redisUrl: string;
  /** Prefix of every Redis key this service writes, so one Redis can serve several installs. */
  redisKeyPrefix: string;
  port: number;
  workerPort: number;
  baseUrl: string;
  webhookTimeoutMs: number;
  /** Delay before each retry: attempt n+1 waits delays[n-1]. Its length + 1 is the attempt cap. */
  webhookRetryDelaysMs: number[];
  webhookAllowPrivateNetworks: boolean;
  staleCampaignDays: number;
  /** How often the worker looks for stale campaigns to close (once per period across replicas). */
  staleCampaignCheckEveryMs: number;
  logLevel: LogLevel;
  /**
   * Express's `trust proxy`: which hops of X-Forwarded-For to believe. `false` (none), a
   * number of proxies in front of the API, or a list of their addresses/subnets. Never
   * Express's `true` (believe every hop): the client writes the left-most entry itself, and
   * the failed-authentication limit per client address would be trivially dodged.
   */
  trustProxy: false | number | string[];
  /**
   * AES-256-GCM key for secrets at rest (processor keys and signing secrets): SECRETS_KEY, 32
   * bytes, with SECRETS_KEY_PREVIOUS beside it during a key rotation (secrets-keyring.ts).
   */
  secretsKey: SecretsKeyring;
  /** Where the Stripe library sends API calls; tests point it at a local server. */
  stripeApiBase: string;
  /** A dashboard session ends after this long without a request (SESSION_IDLE_TIMEOUT). */
  sessionIdleTimeoutMs: number;
  /** A dashboard session ends this long after sign-in, however busy (SESSION_MAX_AGE). */
  sessionMaxAgeMs: number;
  /** `smtp://user:pass@host:port`: emails invitations, resets and alerts; none when unset. */
  smtpUrl: string | null;
  mailFrom: string;
  /**
   * WEBHOOK_DNS_SERVERS: name servers for receivers' host names; null: the system's (resolv.conf).
   */
  webhookDnsServers: string[] | null;
  /** API_HEADERS_TIMEOUT_MS: a client must send its request line and headers within this. */
  apiHeadersTimeoutMs: number;
  /** API_REQUEST_TIMEOUT_MS: ... and its whole request within this (not the response's time). */
  apiRequestTimeoutMs: number;
  /** API_MAX_CONNECTIONS: open connections per API process; more are closed on arrival. */
  apiMaxConnections: number;
  /** API_INTERNAL_PORT: the API's /readyz and /metrics (and /healthz again), never published. */
  apiInternalPort: number;
  /** WEBHOOK_LOG_RETENTION_DAYS: attempts and finished deliveries older than this are deleted. */
  webhookLogRetentionDays: number;
  /**
   * PROCESSOR_EVENT_RETENTION_DAYS: stored Stripe events applied or ignored and received longer
   * ago than this are deleted (docs/processor.md, "Retention"); at least 31.
   */
  processorEventRetentionDays: number;
  /**
   * API_EXPECTED_REPLICAS: API processes sharing the load; without Redis each allows 1/n of a
   * limit.
   */
  apiExpectedReplicas: number;
}

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export class ConfigError extends Error {
  readonly variable: string;

  constructor(variable: string, message: string) {
    super(`Invalid ${variable}: ${message}`);
    this.name = 'ConfigError';
    this.variable = variable;
  }
}

type Env = Record<string, string | undefined>;

function read(env: Env, name: string, fallback: string): string {
  const value = env[name];
  return value === undefined || value.trim() === '' ? fallback : value.trim();
}

function url(env: Env, name: string, fallback: string, schemes: string[]): string {
  const value = read(env, name, fallback);
  let parsed: URL;
  try {
    parsed = new URL(value);
  } catch {
    throw new ConfigError(name, `"${redactUrl(value)}" is not a URL`);
  }
  if (!schemes.includes(parsed.protocol)) {
    throw new ConfigError(name, `the scheme must be one of ${schemes.join(', ')}`);
  }
  return value;
}

/**
 * REDIS_URL: `redis://` or `rediss://` (TLS), a user name and password before the host, a
 * database number as the path. Query options are refused, but for `family`: ioredis would
 * merge them over the options the service sets on each connection (a `maxRetriesPerRequest`
 * there makes BullMQ refuse its blocking connections at the worker's start), and every value
 * would arrive as a string (`enableOfflineQueue=false` is the truthy "false").
 */
function redisUrl(env: Env): string {
  const value = url(env, 'REDIS_URL', 'redis://127.0.0.1:6379', ['redis:', 'rediss:']);
  const parsed = new URL(value);
  const refused = [...new Set(parsed.searchParams.keys())].filter((key) => key !== 'family');
  if (refused.length > 0) {
    throw new ConfigError(
      'REDIS_URL',
      `query options are not accepted (${refused.join(', ')}): they would override the options the service sets ` +
        "on its Redis connections (a maxRetriesPerRequest or keyPrefix breaks BullMQ's blocking connections); " +
        'only family (0, 4 or 6) may be given. Write a password as redis://:PASSWORD@host:6379, ' +
        'a database number as the path (/2), and rediss:// for TLS',
    );
  }
  const family = parsed.searchParams.get('family');
  if (family !== null && !['0', '4', '6'].includes(family)) {
    throw new ConfigError('REDIS_URL', `its family option "${family}" is not 0, 4 or 6`);
  }
  if (!/^(\/\d*)?$/.test(parsed.pathname)) {
    throw new ConfigError('REDIS_URL', 'its path must be a database number, such as /2');
  }
  urlCredentials('REDIS_URL', parsed);
  return value;
}

/**
 * The user name and password of a URL setting, percent-decoded. One pasted as it is, with a `%`
 * not followed by two hex digits, cannot be decoded: that is the variable's fault, so the
 * process stops naming it (the message never holds the value). REDIS_URL is checked here at
 * start; SMTP_URL by the mailer that reads it.
 */
export function urlCredentials(name: string, parsed: URL): { user: string; pass: string } {
  try {
    return { user: decodeURIComponent(parsed.username), pass: decodeURIComponent(parsed.password) };
  } catch {
    throw new ConfigError(
      name,
      'its user name or password is not percent-encoded: write % as %25, @ as %40, : as %3A and / as %2F',
    );
  }
}

/**
 * An integer setting within [min, max]. `belowMin` words the refusal of a well-formed value under
 * `min` when the bound has a reason worth saying (PROCESSOR_EVENT_RETENTION_DAYS).
 */
function integer(
  env: Env,
  name: string,
  fallback: number,
  min: number,
  max: number,
  belowMin?: (value: number) => string,
): number {
  const value = read(env, name, String(fallback));
  const wellFormed = /^\d+$/.test(value);
  if (wellFormed && belowMin && Number(value) < min) throw new ConfigError(name, belowMin(Number(value)));
  if (!wellFormed || Number(value) < min || Number(value) > max) {
    throw new ConfigError(name, `"${value}" is not an integer between ${min} and ${max}`);
  }
  return Number(value);
}

/** Why PROCESSOR_EVENT_RETENTION_DAYS is never under 31 (docs/processor.md, "Retention"). */
const tooShortForStripeResends = (days: number) =>
  `${days} days is fewer than ${MIN_PROCESSOR_EVENT_RETENTION_DAYS}. Stripe resends an event up to 30 days after ` +
  'it was created (the Dashboard, `stripe events resend`), and a resent event whose stored row was deleted ' +
  `would be applied again: keep them ${MIN_PROCESSOR_EVENT_RETENTION_DAYS} days or more`;

function duration(env: Env, name: string, fallback: string, minMs: number, maxMs: number): number {
  const value = read(env, name, fallback);
  const millis = parseDuration(value);
  if (millis === null || millis < minMs || millis > maxMs) {
    throw new ConfigError(
      name,
      `"${value}" is not a duration between ${minMs} ms and ${maxMs / 3_600_000} h, such as 10m`,
    );
  }
  return millis;
}

function boolean(env: Env, name: string, fallback: boolean): boolean {
  const value = read(env, name, String(fallback)).toLowerCase();
  if (['true', '1', 'yes'].includes(value)) return true;
  if (['false', '0', 'no'].includes(value)) return false;
  throw new ConfigError(name, `"${value}" is not true or false`);
}

/**
 * TRUST_PROXY: `false`/`0`, `true` (one proxy in front, the usual load balancer), a hop count,
 * or a comma list of proxy addresses or subnets (`10.0.0.0/8,fd00::/8`).
 */
function trustProxy(env: Env): false | number | string[] {
  const value = read(env, 'TRUST_PROXY', 'false').toLowerCase();
  if (['false', 'no', '0'].includes(value)) return false;
  if (['true', 'yes'].includes(value)) return 1;
  if (/^\d+$/.test(value)) {
    if (Number(value) > 10) throw new ConfigError('TRUST_PROXY', `"${value}" hops is more than 10`);
    return Number(value);
  }
  const subnets = value.split(',').map((part) => part.trim());
  if (subnets.every((part) => /^[0-9a-f.:]+(\/\d{1,3})?$/.test(part) && /[.:]/.test(part))) return subnets;
  throw new ConfigError(
    'TRUST_PROXY',
    `"${value}" is not true, false, a number of proxies, or a comma list of proxy addresses or subnets`,
  );
}

/**
 * SECRETS_KEY: 32 random bytes, written as 64 hex characters or as base64 (44 characters with
 * padding, 43 without). Required: without it stored processor secrets could not be read back,
 * and a process that starts anyway would fail on the first event instead of at start.
 */
export function parseSecretsKey(env: Env): Buffer {
  const hint = 'make one with `openssl rand -base64 32` (npm start makes a development key by itself)';
  const key = parseKey(env, 'SECRETS_KEY', hint);
  if (key === null)
    throw new ConfigError('SECRETS_KEY', `is not set: it must be 32 random bytes as base64 or hex; ${hint}`);
  return key;
}

/**
 * SECRETS_KEY with, during a key rotation, SECRETS_KEY_PREVIOUS: optional, the key SECRETS_KEY
 * was before, written the same way. Secrets are opened with either and sealed with SECRETS_KEY
 * alone (secrets-keyring.ts; docs/operator-cli.md, "Rotating the key"). Unset, it is SECRETS_KEY
 * alone, as before rotation existed.
 */
export function parseSecretsKeyring(env: Env): SecretsKeyring {
  const current = parseSecretsKey(env);
  const previous = parseKey(env, 'SECRETS_KEY_PREVIOUS', 'it is the SECRETS_KEY the stored secrets were sealed with');
  return secretsKeyring(current, previous);
}

/** A key variable's 32 bytes, null when it is unset or blank; the error never holds the value. */
function parseKey(env: Env, name: string, hint: string): Buffer | null {
  const value = env[name]?.trim() ?? '';
  if (value === '') return null;
  let key: Buffer | undefined;
  if (/^[0-9a-fA-F]{64}$/.test(value)) key = Buffer.from(value, 'hex');
  else if (/^[A-Za-z0-9+/_-]{43}=?$/.test(value))
    key = Buffer.from(value.replaceAll('-', '+').replaceAll('_', '/'), 'base64');
  if (key?.length !== 32) {
    throw new ConfigError(name, `must be 32 random bytes written as 64 hex characters or as base64; ${hint}`);
  }
  return key;
}

/** WEBHOOK_DNS_SERVERS: a comma list of `IP`, `IPv4:port` or `[IPv6]:port`. */
function dnsServers(env: Env): string[] | null {
  const value = read(env, 'WEBHOOK_DNS_SERVERS', '');
  if (value === '') return null;
  const servers = value.split(',').map((part) => part.trim());
  const valid = (server: string) => {
    const match = /^(?:\[([0-9a-f:.]+)\]|([0-9.]+))(?::(\d{1,5}))?$|^([0-9a-f:]+)$/i.exec(server);
    if (!match) return false;
    const host = match[1] ?? match[2] ?? match[4]!;
    const port = match[3] === undefined ? 53 : Number(match[3]);
    return isIP(host) !== 0 && port >= 1 && port <= 65535;
  };
  if (!servers.every(valid)) {
    throw new ConfigError(
      'WEBHOOK_DNS_SERVERS',
      `"${value}" is not a comma list of name server addresses such as 10.0.0.2, 10.0.0.2:5353 or [fd00::53]:53`,
    );
  }
  return servers;
}

/**
 * INSECURE_FAST_PASSWORD_HASHING=1 makes new password hashes cheap, for test runs only
 * (packages/domain/src/accounts/passwords.ts; docs/decisions.md, "Password hashing in tests").
 * A deployment (NODE_ENV=production) that has it does not start: anyone holding a copy of its
 * database could try passwords at millions a second.
 */
function refuseInsecurePasswordHashing(env: Env): void {
  const value = env.INSECURE_FAST_PASSWORD_HASHING;
  if (value === undefined || value === '') return;
  if (value !== '1') throw new ConfigError('INSECURE_FAST_PASSWORD_HASHING', 'must be 1 or unset');
  if (env.NODE_ENV === 'production') {
    throw new ConfigError(
      'INSECURE_FAST_PASSWORD_HASHING',
      'is for test runs only and is refused with NODE_ENV=production: passwords would be hashed at a cost ' +
        'that lets anyone with a copy of the database try millions a second. Unset it',
    );
  }
}

export function loadConfig(env: Env = process.env): Config {
  const delaysText = read(env, 'WEBHOOK_RETRY_DELAYS', DEFAULT_RETRY_SCHEDULE);
  const webhookRetryDelaysMs = parseDurationList(delaysText);
  if (!webhookRetryDelaysMs || webhookRetryDelaysMs.length > 50) {
    throw new ConfigError(
      'WEBHOOK_RETRY_DELAYS',
      `"${delaysText}" is not a comma list of durations such as 1s,1s,2s or 500ms`,
    );
  }
  const logLevel = read(env, 'LOG_LEVEL', 'info');
  if (!(LOG_LEVELS as readonly string[]).includes(logLevel)) {
    throw new ConfigError('LOG_LEVEL', `must be one of ${LOG_LEVELS.join(', ')}`);
  }
  const redisKeyPrefix = read(env, 'REDIS_KEY_PREFIX', 'retention');
  if (!/^[A-Za-z0-9_.-]{1,64}$/.test(redisKeyPrefix)) {
    throw new ConfigError('REDIS_KEY_PREFIX', 'use 1 to 64 letters, digits, dots, dashes or underscores');
  }
  refuseInsecurePasswordHashing(env);
  const port = integer(env, 'PORT', 3000, 0, 65535);
  const apiHeadersTimeoutMs = integer(env, 'API_HEADERS_TIMEOUT_MS', 10_000, 100, 600_000);
  const apiRequestTimeoutMs = integer(env, 'API_REQUEST_TIMEOUT_MS', 30_000, 100, 3_600_000);
  if (apiRequestTimeoutMs < apiHeadersTimeoutMs) {
    throw new ConfigError(
      'API_REQUEST_TIMEOUT_MS',
      `${apiRequestTimeoutMs} is less than API_HEADERS_TIMEOUT_MS (${apiHeadersTimeoutMs}): the headers are part of the request`,
    );
  }
  return {
    databaseUrl: withLoginName(
      env,
      url(env, 'DATABASE_URL', 'postgres://localhost:5432/retention', ['postgres:', 'postgresql:']),
    ),
    redisUrl: redisUrl(env),
    redisKeyPrefix,
    port,
    workerPort: integer(env, 'WORKER_PORT', 3001, 0, 65535),
    // The default of operator-cli.md, whatever PORT is; `npm start` sets it to its own port.
    baseUrl: url(env, 'BASE_URL', 'http://localhost:3000', ['http:', 'https:']).replace(/\/+$/, ''),
    webhookTimeoutMs: integer(env, 'WEBHOOK_TIMEOUT_MS', 8000, 1, 120_000),
    webhookRetryDelaysMs,
    webhookAllowPrivateNetworks: boolean(env, 'WEBHOOK_ALLOW_PRIVATE_NETWORKS', false),
    staleCampaignDays: integer(env, 'STALE_CAMPAIGN_DAYS', DEFAULT_STALE_CAMPAIGN_DAYS, 1, 3650),
    staleCampaignCheckEveryMs: duration(
      env,
      'STALE_CAMPAIGN_CHECK_INTERVAL',
      DEFAULT_STALE_CAMPAIGN_CHECK_INTERVAL,
      100,
      24 * 3_600_000,
    ),
    logLevel: logLevel as LogLevel,
    trustProxy: trustProxy(env),
    secretsKey: parseSecretsKeyring(env),
    stripeApiBase: url(env, 'STRIPE_API_BASE', 'https://api.stripe.com', ['http:', 'https:']).replace(/\/+$/, ''),
    sessionIdleTimeoutMs: duration(env, 'SESSION_IDLE_TIMEOUT', '12h', 1000, 30 * 24 * 3_600_000),
    sessionMaxAgeMs: duration(env, 'SESSION_MAX_AGE', '7d', 1000, 90 * 24 * 3_600_000),
    smtpUrl: read(env, 'SMTP_URL', '') === '' ? null : url(env, 'SMTP_URL', '', ['smtp:', 'smtps:']),
    mailFrom: read(env, 'MAIL_FROM', 'Retention <no-reply@localhost>'),
    webhookDnsServers: dnsServers(env),
    apiHeadersTimeoutMs,
    apiRequestTimeoutMs,
    apiMaxConnections: integer(env, 'API_MAX_CONNECTIONS', 2000, 1, 1_000_000),
    apiInternalPort: integer(env, 'API_INTERNAL_PORT', 3002, 0, 65535),
    webhookLogRetentionDays: integer(env, 'WEBHOOK_LOG_RETENTION_DAYS', DEFAULT_WEBHOOK_LOG_RETENTION_DAYS, 1, 3650),
    processorEventRetentionDays: integer(
      env,
      'PROCESSOR_EVENT_RETENTION_DAYS',
      DEFAULT_PROCESSOR_EVENT_RETENTION_DAYS,
      MIN_PROCESSOR_EVENT_RETENTION_DAYS,
      3650,
      tooShortForStripeResends,
    ),
    apiExpectedReplicas: integer(env, 'API_EXPECTED_REPLICAS', 1, 1, 1000),
  };
}

/**
 * A PostgreSQL URL that names no user gets the operating-system login name, as libpq (psql)
 * does. node-postgres would take $USER instead, which containers and some CI leave unset:
 * "no PostgreSQL user name specified". PGUSER, which both honour, still wins.
 */
function withLoginName(env: Env, databaseUrl: string): string {
  const parsed = new URL(databaseUrl);
  if (parsed.username || read(env, 'PGUSER', '') !== '') return databaseUrl;
  let login: string;
  try {
    login = userInfo().username;
  } catch {
    return databaseUrl; // a uid with no passwd entry: leave it to the driver
  }
  parsed.username = encodeURIComponent(login);
  return parsed.toString();
}

/** A connection URL with its password replaced, safe to print. */
export function redactUrl(value: string): string {
  try {
    const parsed = new URL(value);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return '(unparseable URL)';
  }
}

/**
 * A warning when a deployment (NODE_ENV=production) kept a local BASE_URL, such as the
 * compose file's default `http://localhost:3000`: every link made from it (the Stripe
 * `webhook_url` of `processor connect`, invitation and password-reset links, the dashboard's
 * emails) would point at localhost, which no customer or processor can reach. Null when
 * there is nothing to say. Logged once at start by the API and the worker, and by the CLI
 * after a command that printed such a link.
 */
export function localBaseUrlWarning(baseUrl: string, env: Env = process.env): string | null {
  if (env.NODE_ENV !== 'production') return null;
  let host: string;
  try {
    host = new URL(baseUrl).hostname;
  } catch {
    return null;
  }
  if (!isLocalHost(host)) return null;
  return (
    `BASE_URL is ${redactUrl(baseUrl)}, a local address, with NODE_ENV=production: the links made from it ` +
    "(processor connect's webhook_url, invitation and password-reset links) point at this machine. " +
    "Set BASE_URL to the service's public URL."
  );
}
