import { createHash, randomBytes } from 'node:crypto';
import { accountEmail } from '@retention/domain';
import type { Redis } from '@retention/runtime';

/**
 * Browsers that have signed in to an account: OWASP's "device cookies"
 * (docs/dashboard-api.md, "Trusted devices"). A successful sign-in gives the browser a random
 * value naming the account; a later sign-in to that account bearing it is not refused by the
 * account-wide failure limit, which a stranger with many addresses can fill, nor a reset e-mail
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
 * The account as the limits name it: the SHA-256 of its e-mail in the spelling sign-in and reset
 * look it up by (accountEmail: one lower-casing for both, so one account has one key), known or
 * not, so neither a record nor a key spells out whom it is about. Every address no account can
 * have shares one key: none of them reaches an account.
 */
export const accountHash = (email: unknown): string => sha256(accountEmail(email) ?? '');

export class TrustedDevices {
  constructor(
    private readonly redis: Redis,
    private readonly keyPrefix: string,
  ) {}

  /**
   * A new device value for the account, trusted for DEVICE_LIFETIME_MS. The value the browser
   * held until now (if any) is forgotten: it is about to be replaced, and a copy of it taken
   * earlier must not outlive it.
   */
  async issue(email: string, replacing: string | undefined): Promise<string> {
    const value = randomBytes(32).toString('base64url');
    const write = this.redis.multi().set(this.recordKey(sha256(value)), accountHash(email), 'PX', DEVICE_LIFETIME_MS);
    if (replacing !== undefined && DEVICE_VALUE.test(replacing)) write.del(this.recordKey(sha256(replacing)));
    await write.exec();
    return value;
  }

  /**
   * The device's id (its value's SHA-256, for limit keys) when `value` is a live device of this
   * account; null for none, a made-up value, an expired or forgotten one, or another account's.
   */
  async trustedFor(value: string | undefined, email: unknown): Promise<string | null> {
    if (value === undefined || !DEVICE_VALUE.test(value)) return null;
    const id = sha256(value);
    const account = await this.redis.get(this.recordKey(id));
    return account === accountHash(email) ? id : null;
  }

  /** No longer trusted (it failed too often): its sign-ins are limited as any stranger's. */
  async forget(id: string): Promise<void> {
    await this.redis.del(this.recordKey(id));
  }

  private recordKey(id: string): string {
    return `${this.keyPrefix}:device:${id}`;
  }
}
