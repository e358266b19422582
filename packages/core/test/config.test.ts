import { userInfo } from 'node:os';
import { describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { ConfigError, currentKey, loadConfig, openSecret, previousKey, sealSecret } from '../src/index.js';

const KEY = { SECRETS_KEY: randomBytes(32).toString('base64') };

describe('loadConfig', () => {
  it('applies the documented defaults', () => {
    const config = loadConfig(KEY);
    expect(config).toMatchObject({
      databaseUrl: `postgres://${userInfo().username}@localhost:5432/retention`,
      redisUrl: 'redis://127.0.0.1:6379',
      port: 3000,
      baseUrl: 'http://localhost:3000',
      webhookTimeoutMs: 8000,
      webhookAllowPrivateNetworks: false,
      staleCampaignDays: 30,
      staleCampaignCheckEveryMs: 600_000,
    });
    expect(config.webhookRetryDelaysMs).toEqual([5e3, 3e5, 18e5, 72e5, 18e6, 36e6, 504e5, 72e6, 864e5]);
  });

  it.each([
    ['PORT', 'eighty'],
    ['PORT', '70000'],
    ['DATABASE_URL', 'mysql://localhost/x'],
    ['REDIS_URL', 'not a url'],
    ['REDIS_URL', 'redis://127.0.0.1:6379/?maxRetriesPerRequest=3'],
    ['REDIS_URL', 'redis://127.0.0.1:6379/?family=5'],
    ['REDIS_URL', 'redis://127.0.0.1:6379/cache'],
    ['REDIS_URL', 'redis://:50%off@127.0.0.1:6379'],
    ['WEBHOOK_TIMEOUT_MS', '-1'],
    ['WEBHOOK_RETRY_DELAYS', '5 seconds'],
    ['WEBHOOK_ALLOW_PRIVATE_NETWORKS', 'maybe'],
    ['STALE_CAMPAIGN_DAYS', '0'],
    ['STALE_CAMPAIGN_CHECK_INTERVAL', 'often'],
    ['STALE_CAMPAIGN_CHECK_INTERVAL', '0ms'],
    ['BASE_URL', 'ftp://example.com'],
    ['TRUST_PROXY', 'sometimes'],
    ['TRUST_PROXY', '11'],
    ['TRUST_PROXY', '10.0.0.0/8,loopback'],
    ['WEBHOOK_DNS_SERVERS', 'dns.example.com'],
    ['WEBHOOK_DNS_SERVERS', '10.0.0.2:70000'],
    ['WEBHOOK_DNS_SERVERS', '10.0.0.2,,10.0.0.3'],
  ])('names %s when its value %p is invalid', (variable, value) => {
    let caught: unknown;
    try {
      loadConfig({ ...KEY, [variable]: value });
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(ConfigError);
    expect((caught as ConfigError).variable).toBe(variable);
    expect((caught as ConfigError).message).toContain(variable);
  });

  it('reads the dashboard session lifetimes and the SMTP settings', () => {
    expect(loadConfig(KEY)).toMatchObject({
      sessionIdleTimeoutMs: 12 * 3_600_000,
      sessionMaxAgeMs: 7 * 86_400_000,
      smtpUrl: null,
      mailFrom: 'Retention <no-reply@localhost>',
    });
    expect(
      loadConfig({ ...KEY, SESSION_IDLE_TIMEOUT: '30m', SESSION_MAX_AGE: '1d', SMTP_URL: 'smtp://u:p@mail.test:2525' }),
    ).toMatchObject({
      sessionIdleTimeoutMs: 1_800_000,
      sessionMaxAgeMs: 86_400_000,
      smtpUrl: 'smtp://u:p@mail.test:2525',
    });
    expect(() => loadConfig({ ...KEY, SESSION_IDLE_TIMEOUT: 'forever' })).toThrow(ConfigError);
    expect(() => loadConfig({ ...KEY, SMTP_URL: 'http://mail.test' })).toThrow(/SMTP_URL/);
    expect(() => loadConfig({ ...KEY, SMTP_URL: 'smtp://u:secret-pass@' })).not.toThrow(/secret-pass/);
  });

  it("refuses REDIS_URL's query options, which ioredis would merge over the connections' own, and keeps its other parts", () => {
    const refusal = (redisUrl: string) => {
      try {
        loadConfig({ ...KEY, REDIS_URL: redisUrl });
      } catch (error) {
        return (error as Error).message;
      }
      return undefined;
    };
    const message = refusal('redis://:hunter2@127.0.0.1:6379/?maxRetriesPerRequest=3&enableOfflineQueue=false');
    expect(message).toMatch(
      /^Invalid REDIS_URL: query options are not accepted \(maxRetriesPerRequest, enableOfflineQueue\)/,
    );
    expect(message).toContain("BullMQ's blocking connections");
    expect(message).not.toContain('hunter2');
    expect(refusal('redis://:50%off@127.0.0.1:6379')).toContain('not percent-encoded');
    expect(refusal('redis://:50%off@127.0.0.1:6379')).not.toContain('50%off');
    // A password, a user, a database number, TLS and the address family are the URL's to give.
    for (const accepted of [
      'redis://:p%40ss%25word@127.0.0.1:6379/2',
      'rediss://retention:secret@redis.example.com:6380/0?family=6',
      'redis://[::1]:6379/',
      'redis://127.0.0.1:6379?family=4',
    ]) {
      expect(loadConfig({ ...KEY, REDIS_URL: accepted }).redisUrl).toBe(accepted);
    }
  });

  it('keeps finished Stripe events PROCESSOR_EVENT_RETENTION_DAYS days (90 by default), never fewer than 31', () => {
    expect(loadConfig(KEY).processorEventRetentionDays).toBe(90);
    expect(loadConfig({ ...KEY, PROCESSOR_EVENT_RETENTION_DAYS: '31' }).processorEventRetentionDays).toBe(31);
    expect(loadConfig({ ...KEY, PROCESSOR_EVENT_RETENTION_DAYS: '400' }).processorEventRetentionDays).toBe(400);
    const refusal = (value: string) => {
      try {
        loadConfig({ ...KEY, PROCESSOR_EVENT_RETENTION_DAYS: value });
      } catch (error) {
        return error as ConfigError;
      }
      throw new Error(`${value} was accepted`);
    };
    // Under 31: an event Stripe may still resend (up to 30 days) would be applied a second time.
    const short = refusal('30');
    expect(short).toBeInstanceOf(ConfigError);
    expect(short.variable).toBe('PROCESSOR_EVENT_RETENTION_DAYS');
    expect(short.message).toBe(
      'Invalid PROCESSOR_EVENT_RETENTION_DAYS: 30 days is fewer than 31. Stripe resends an event up to 30 days ' +
        'after it was created (the Dashboard, `stripe events resend`), and a resent event whose stored row was ' +
        'deleted would be applied again: keep them 31 days or more',
    );
    expect(refusal('0').message).toMatch(/^Invalid PROCESSOR_EVENT_RETENTION_DAYS: 0 days is fewer than 31\. /);
    for (const value of ['-5', 'ninety', '90.5', '3651']) {
      expect(refusal(value).message).toBe(
        `Invalid PROCESSOR_EVENT_RETENTION_DAYS: "${value}" is not an integer between 31 and 3650`,
      );
    }
  });

  it('refuses INSECURE_FAST_PASSWORD_HASHING with NODE_ENV=production, and any value but 1', () => {
    expect(() => loadConfig({ ...KEY, INSECURE_FAST_PASSWORD_HASHING: '1' })).not.toThrow();
    expect(() => loadConfig({ ...KEY, INSECURE_FAST_PASSWORD_HASHING: '1', NODE_ENV: 'development' })).not.toThrow();
    expect(() => loadConfig({ ...KEY, INSECURE_FAST_PASSWORD_HASHING: '', NODE_ENV: 'production' })).not.toThrow();
    expect(() => loadConfig({ ...KEY, INSECURE_FAST_PASSWORD_HASHING: '1', NODE_ENV: 'production' })).toThrow(
      /^Invalid INSECURE_FAST_PASSWORD_HASHING: is for test runs only and is refused with NODE_ENV=production/,
    );
    expect(() => loadConfig({ ...KEY, INSECURE_FAST_PASSWORD_HASHING: 'true' })).toThrow(
      'Invalid INSECURE_FAST_PASSWORD_HASHING: must be 1 or unset',
    );
  });

  it('reads the stale-campaign check interval as a duration', () => {
    expect(loadConfig({ ...KEY, STALE_CAMPAIGN_CHECK_INTERVAL: '500ms' }).staleCampaignCheckEveryMs).toBe(500);
    expect(loadConfig({ ...KEY, STALE_CAMPAIGN_CHECK_INTERVAL: '1h' }).staleCampaignCheckEveryMs).toBe(3_600_000);
  });

  it('defaults BASE_URL to http://localhost:3000 as operator-cli.md says, whatever PORT is', () => {
    expect(loadConfig({ ...KEY, PORT: '4160' }).baseUrl).toBe('http://localhost:3000');
    expect(loadConfig({ ...KEY, PORT: '4160', BASE_URL: 'https://api.example.com/' }).baseUrl).toBe(
      'https://api.example.com',
    );
  });

  it('names the operating-system login name in a DATABASE_URL without a user, as libpq does, whatever $USER is', () => {
    const login = userInfo().username;
    expect(loadConfig({ ...KEY, USER: undefined }).databaseUrl).toBe(`postgres://${login}@localhost:5432/retention`);
    expect(loadConfig({ ...KEY, DATABASE_URL: 'postgres://db.internal/app' }).databaseUrl).toBe(
      `postgres://${login}@db.internal/app`,
    );
    // A user in the URL, or PGUSER, is kept as given.
    expect(loadConfig({ ...KEY, DATABASE_URL: 'postgres://alice:pw@db/app' }).databaseUrl).toBe(
      'postgres://alice:pw@db/app',
    );
    expect(loadConfig({ ...KEY, PGUSER: 'bob' }).databaseUrl).toBe('postgres://localhost:5432/retention');
  });

  it("reads WEBHOOK_DNS_SERVERS as name server addresses, the system's by default", () => {
    expect(loadConfig(KEY).webhookDnsServers).toBeNull();
    expect(
      loadConfig({ ...KEY, WEBHOOK_DNS_SERVERS: '10.0.0.2, 10.0.0.3:5353,[fd00::53]:53,::1' }).webhookDnsServers,
    ).toEqual(['10.0.0.2', '10.0.0.3:5353', '[fd00::53]:53', '::1']);
  });

  it('reads TRUST_PROXY as hops or subnets, never as "believe every X-Forwarded-For hop"', () => {
    expect(loadConfig(KEY).trustProxy).toBe(false);
    expect(loadConfig({ ...KEY, TRUST_PROXY: 'false' }).trustProxy).toBe(false);
    expect(loadConfig({ ...KEY, TRUST_PROXY: 'true' }).trustProxy).toBe(1);
    expect(loadConfig({ ...KEY, TRUST_PROXY: '2' }).trustProxy).toBe(2);
    expect(loadConfig({ ...KEY, TRUST_PROXY: '10.0.0.0/8, fd00::/8' }).trustProxy).toEqual(['10.0.0.0/8', 'fd00::/8']);
  });

  it('never echoes a database password', () => {
    const load = () => loadConfig({ ...KEY, DATABASE_URL: 'postgres://u:hunter2@db:99999/x' });
    expect(load).toThrow(ConfigError);
    expect(load).not.toThrow(/hunter2/);
  });

  it.each([
    ['missing', undefined, /SECRETS_KEY: is not set/],
    ['blank', '  ', /SECRETS_KEY: is not set/],
    ['too short', randomBytes(16).toString('base64'), /SECRETS_KEY: must be 32 random bytes/],
    ['not base64 or hex', 'x'.repeat(44), /SECRETS_KEY: must be 32 random bytes/],
    ['63 hex characters', 'a'.repeat(63), /SECRETS_KEY: must be 32 random bytes/],
  ])('stops at start when SECRETS_KEY is %s, naming the variable', (_case, value, message) => {
    let caught: unknown;
    try {
      loadConfig(value === undefined ? {} : { SECRETS_KEY: value });
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(ConfigError);
    expect((caught as ConfigError).variable).toBe('SECRETS_KEY');
    expect((caught as ConfigError).message).toMatch(message);
    if (value?.trim()) expect((caught as ConfigError).message).not.toContain(value);
  });

  it('reads SECRETS_KEY as base64 (with or without padding, url-safe too) or as hex', () => {
    const key = randomBytes(32);
    for (const written of [
      key.toString('base64'),
      key.toString('base64').replace(/=+$/, ''),
      key.toString('base64url'),
      key.toString('hex'),
      key.toString('hex').toUpperCase(),
    ]) {
      expect(currentKey(loadConfig({ SECRETS_KEY: written }).secretsKey).equals(key)).toBe(true);
    }
  });

  it('seals secrets with AES-256-GCM: each sealing differs, a wrong key or a changed byte fails to open', () => {
    const { secretsKey } = loadConfig(KEY);
    const sealed = sealSecret(secretsKey, 'whsec_abc123');
    expect(sealed).not.toContain('abc123');
    expect(sealSecret(secretsKey, 'whsec_abc123')).not.toBe(sealed);
    expect(openSecret(secretsKey, sealed)).toBe('whsec_abc123');
    expect(() => openSecret(randomBytes(32), sealed)).toThrow(/SECRETS_KEY/);
    const tampered = sealed.slice(0, -2) + (sealed.endsWith('A') ? 'BB' : 'AA');
    expect(() => openSecret(secretsKey, tampered)).toThrow(/SECRETS_KEY/);
  });

  it.each([
    ['too short', randomBytes(16).toString('base64')],
    ['not base64 or hex', 'x'.repeat(44)],
    ['63 hex characters', 'a'.repeat(63)],
  ])('stops at start when SECRETS_KEY_PREVIOUS is %s, naming it and never its value', (_case, value) => {
    let caught: unknown;
    try {
      loadConfig({ ...KEY, SECRETS_KEY_PREVIOUS: value });
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(ConfigError);
    expect((caught as ConfigError).variable).toBe('SECRETS_KEY_PREVIOUS');
    expect((caught as ConfigError).message).toMatch(/SECRETS_KEY_PREVIOUS: must be 32 random bytes/);
    expect((caught as ConfigError).message).not.toContain(value);
  });

  it('without SECRETS_KEY_PREVIOUS (unset or blank) holds SECRETS_KEY alone, as before rotation existed', () => {
    for (const env of [KEY, { ...KEY, SECRETS_KEY_PREVIOUS: ' ' }]) {
      const { secretsKey } = loadConfig(env);
      expect(Buffer.isBuffer(secretsKey)).toBe(true);
      expect(previousKey(secretsKey)).toBeNull();
    }
  });

  it('during a rotation opens with SECRETS_KEY or SECRETS_KEY_PREVIOUS, and seals with SECRETS_KEY alone', () => {
    const oldKey = randomBytes(32);
    const { secretsKey } = loadConfig({ ...KEY, SECRETS_KEY_PREVIOUS: oldKey.toString('hex') });
    expect(previousKey(secretsKey)!.equals(oldKey)).toBe(true);
    const sealedBefore = sealSecret(oldKey, 'whsec_before');
    expect(openSecret(secretsKey, sealedBefore)).toBe('whsec_before');
    const sealedNow = sealSecret(secretsKey, 'whsec_now');
    expect(openSecret(currentKey(secretsKey), sealedNow)).toBe('whsec_now');
    expect(() => openSecret(oldKey, sealedNow)).toThrow(/SECRETS_KEY/);
    // A value neither key opens names both.
    expect(() => openSecret(secretsKey, sealSecret(randomBytes(32), 'whsec_x'))).toThrow(
      /neither SECRETS_KEY nor SECRETS_KEY_PREVIOUS/,
    );
  });

  it('defaults STRIPE_API_BASE to https://api.stripe.com', () => {
    expect(loadConfig(KEY).stripeApiBase).toBe('https://api.stripe.com');
    expect(loadConfig({ ...KEY, STRIPE_API_BASE: 'http://127.0.0.1:4242/' }).stripeApiBase).toBe(
      'http://127.0.0.1:4242',
    );
  });
});
