import { createHash, randomBytes } from 'node:crypto';
import { accountEmail } from '@retention/domain';
import type { Redis } from '@retention/runtime';

/**
 * Browsers that have signed in to an account: OWASP's "device cookies"
 * (docs/dashboard-api.md, "Trusted devices"). A successful sign-in gives the browser a random
 * value naming the account; a later sign-in to that account bearing it is not refused by the
 * account-wide failure limit, which a stranger with many addresses can fill, nor a reset email
 * by the account's hourly count, which a stranger can use up.
 *
 * Random rather than signed, as session cookies are: no key to keep, rotate or leak, and a
 * device is forgotten by deleting its record. Only the value's SHA-256 is kept, in Redis (where
 * the limits it relaxes live), with the account it names and an expiry. Redis losing its data
 * forgets every device, which only puts their sign-ins back under the account-wide limit.
 */

/** How long a device stays trusted without signing in again; each sign-in gives a new value. */
export const DEVICE_LIFETIME_MS = 90 * 24 * 60 * 60_000;

/** 32 random bytes, base64url: what `issue` makes. Anything else is not looked up. */
const DEVICE_VALUE = /^[A-Za-z0-9_-]{43}$/;

const sha256 = (text: string) => createHash('sha256').update(text).digest('base64url');

/**
 * The account as the limits name it: the SHA-256 of its email in the spelling sign-in and reset
 * look it up by (accountEmail: one lower-casing for both, so one account has one key), known or
 * not, so neither a record nor a key spells out whom it is about. Every address no account can
 * have shares one key: none of them reaches an account.
 */
export const accountHash = (email: unknown): string => sha256(accountEmail(email) ?? '');

/**
 * Failed sign-ins a device may have in its whole life: at this many it is forgotten. Counted
 * over its lifetime rather than a window, so a copied cookie buys this many guesses once, not
 * this many every quarter of an hour for 90 days; its owner's next sign-in replaces it anyway.
 */
export const DEVICE_FAILURE_LIMIT = 5;

/**
 * Devices an account keeps: each sign-in without the cookie makes one, with reset emails of
 * its own and a Redis record, so a stranger who knows the password (or signs in over and over)
 * must not mint them without end. The oldest is forgotten; a person has a few browsers.
 */
const DEVICES_PER_ACCOUNT = 10;

export class TrustedDevices {
  constructor(
    private readonly redis: Redis,
    private readonly keyPrefix: string,
  ) {}

  /**
   * A new device value for the account, trusted for DEVICE_LIFETIME_MS. The value the browser
   * held until now (if any) is forgotten: it is about to be replaced, and a copy of it taken
   * earlier must not outlive it. The account's index of devices (a sorted set by time of issue,
   * expiring with its newest device) lets a password change forget them all, and keeps only the
   * newest DEVICES_PER_ACCOUNT.
   */
  async issue(email: string, replacing: readonly string[]): Promise<string> {
    const value = randomBytes(32).toString('base64url');
    const id = sha256(value);
    const account = accountHash(email);
    const write = this.redis
      .multi()
      .set(this.recordKey(id), account, 'PX', DEVICE_LIFETIME_MS)
      .zadd(this.indexKey(account), Date.now(), id)
      .pexpire(this.indexKey(account), DEVICE_LIFETIME_MS);
    for (const replaced of replacing.filter((each) => DEVICE_VALUE.test(each)).map(sha256))
      write.del(this.recordKey(replaced), this.attemptsKey(replaced)).zrem(this.indexKey(account), replaced);
    await write.exec();
    await this.evictOldest(account);
    return value;
  }

  /**
   * Forgets the account's devices beyond the newest DEVICES_PER_ACCOUNT. Not atomic with the
   * issue: two sign-ins at once may both evict, which only forgets the same oldest ones twice.
   */
  private async evictOldest(account: string): Promise<void> {
    const index = this.indexKey(account);
    const oldest = await this.redis.zrange(index, '0', String(-DEVICES_PER_ACCOUNT - 1));
    if (oldest.length === 0) return;
    await this.redis
      .multi()
      .del(...oldest.flatMap((id) => [this.recordKey(id), this.attemptsKey(id)]))
      .zrem(index, ...oldest)
      .exec();
  }

  /**
   * The id (its value's SHA-256, for limit keys) of the first of `values` that is a live device
   * of this account; null for none, made-up values, expired or forgotten ones, another
   * account's. Each is checked: a cookie of the same name set by a sibling subdomain and sent
   * first must not hide the owner's device.
   */
  async trustedFor(values: readonly string[], email: unknown): Promise<string | null> {
    const ids = values.filter((value) => DEVICE_VALUE.test(value)).map(sha256);
    if (ids.length === 0) return null;
    const accounts = await this.redis.mget(ids.map((id) => this.recordKey(id)));
    const account = accountHash(email);
    return ids.find((_, index) => accounts[index] === account) ?? null;
  }

  /**
   * Counts a sign-in attempt from the device before its password is checked, so a burst cannot
   * outrun the count: the answer includes this attempt. A success replaces the device (issue),
   * so what the count keeps is its failures, for as long as the device lives.
   */
  async countAttempt(id: string): Promise<number> {
    const [[, count]] = (await this.redis
      .multi()
      .incr(this.attemptsKey(id))
      .pexpire(this.attemptsKey(id), DEVICE_LIFETIME_MS)
      .exec()) as [[Error | null, number], unknown];
    return count;
  }

  /** No longer trusted (it failed too often): its sign-ins are limited as any stranger's. */
  async forget(id: string, email: unknown): Promise<void> {
    await this.redis
      .multi()
      .del(this.recordKey(id), this.attemptsKey(id))
      .zrem(this.indexKey(accountHash(email)), id)
      .exec();
  }

  /**
   * Forgets every device of the account: its password changed or was reset, or it left the
   * team. A cookie copied before is then worth nothing, not even its few attempts.
   */
  async forgetAll(email: string): Promise<void> {
    const index = this.indexKey(accountHash(email));
    const ids = await this.redis.zrange(index, '0', '-1');
    await this.redis
      .multi()
      .del(index, ...ids.flatMap((id) => [this.recordKey(id), this.attemptsKey(id)]))
      .exec();
  }

  private recordKey(id: string): string {
    return `${this.keyPrefix}:device:${id}`;
  }

  private attemptsKey(id: string): string {
    return `${this.keyPrefix}:device-attempts:${id}`;
  }

  private indexKey(account: string): string {
    return `${this.keyPrefix}:devices-of:${account}`;
  }
}
