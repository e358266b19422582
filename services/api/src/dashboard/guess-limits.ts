import { rateLimited } from '@retention/core';
import type { Redis } from '@retention/runtime';
import { SlidingWindowRateLimiter, type GuardWindow } from '../rate-limiter.js';
import { addressBucket } from './client-address.js';
import { accountHash, DEVICE_FAILURE_LIMIT, type TrustedDevices } from './trusted-devices.js';

/**
 * Limits on what guesses a secret or costs a memory-hard hash, with the API's sliding window
 * in Redis (docs/dashboard-api.md, "Limits on guessing"):
 * - signing in: attempts per account from one client address, failures per account from all
 *   addresses together (a far higher ceiling), and failures per client address (the spec's rule:
 *   per account and per address, without letting one address lock an account for everyone);
 *   a browser the account signed in from before (a trusted device, trusted-devices.ts) is not
 *   held by the account's failures, only by its own few attempts and the other limits;
 * - spending a one-time link (accepting an invitation, setting a reset password): refused while
 *   the address's failures are full, and a link that is not valid counts as a failure;
 * - checking the current password to change it: attempts per account;
 * - asking for a reset email: per account (per device, from a trusted device), per account from
 *   all its devices and strangers together, and per address an hour; beyond that nothing is
 *   sent, and the answer does not say so (it must not tell whether the account exists).
 */

const WINDOW_MS = 15 * 60_000;
/**
 * Sign-in attempts per account from one client address (IPv6 by /64), a success too: ten in a
 * quarter of an hour is not a person. Per pair, not per account: a stranger who fills it locks
 * the account for their own address only, not for its owner elsewhere.
 */
const SIGN_IN_LIMIT_PER_ACCOUNT_AND_ADDRESS = 10;
/**
 * Failed sign-ins per account from all addresses together: bounds guessing spread over many
 * addresses. Ten times the pair's limit, so filling it takes ten addresses (/64s) at least.
 */
const SIGN_IN_FAILURE_LIMIT_PER_ACCOUNT = 100;
/**
 * Sign-ins to one account whose password check may run at once, from all addresses: a burst
 * must not queue hundreds of memory-hard hashes. An attempt is in flight until its check ends;
 * one whose process died is dropped after IN_FLIGHT_MS. A person has one or two at a time.
 */
const SIGN_IN_IN_FLIGHT_PER_ACCOUNT = 10;
const IN_FLIGHT_MS = 30_000;
/** Failures per client address in the window: sign-ins and links that were not valid, together. */
const FAILURE_LIMIT_PER_ADDRESS = 50;
/** Links spent from one address in the window, valid or not: a person needs one or two. */
const LINK_LIMIT_PER_ADDRESS = 100;
const PASSWORD_CHECK_LIMIT_PER_ACCOUNT = 10;
const RESET_WINDOW_MS = 60 * 60_000;
const RESET_EMAILS_PER_ACCOUNT = 3;
const RESET_REQUESTS_PER_ADDRESS = 20;
/** From a trusted device, its own count replaces the account's, which a stranger can use up. */
const RESET_EMAILS_PER_DEVICE = 3;
/** Reset emails to one account an hour, from its trusted devices and strangers together. */
const RESET_EMAILS_PER_ACCOUNT_ALL = 10;

/** Hashed: a window's Redis key need not spell out whom it is about. */
const accountKey = (kind: string, email: unknown) => `${kind}:${accountHash(email)}`;
const failuresOf = (ip: string | undefined) => `signin-address:${addressBucket(ip)}`;
const accountFailuresOf = (email: unknown) => accountKey('signin-account-failures', email);
const pairOf = (email: unknown, ip: string | undefined) => `${accountKey('signin-pair', email)}:${addressBucket(ip)}`;
/** A sign-in admitted by `signIn`: what its outcome takes back or adds. */
export interface SignInAttempt {
  email: unknown;
  /** The member counted in the reserved windows. */
  member: string;
  /** The failure windows the attempt was counted in when admitted. */
  reserved: readonly string[];
  /**
   * The trusted device of the account it came from (not reserved in the account's failures), or
   * null.
   */
  device: DeviceAttempt | null;
  /** Its member among the account's password checks running at once (endCheck takes it back). */
  inFlight: string;
}

/** A trusted device's id, and its attempts counted so far, this one included. */
interface DeviceAttempt {
  id: string;
  attempts: number;
}

/**
 * When to try again, in the words of a refusal: the window's own wait (Retry-After), so that a
 * person locked out for a quarter of an hour reads "15 minutes", not "a few". Rounded up.
 */
function tryAgainIn(waitMs: number): string {
  const seconds = Math.max(1, Math.ceil(waitMs / 1000));
  if (seconds < 60) return `Try again in ${seconds} second${seconds === 1 ? '' : 's'}.`;
  const minutes = Math.ceil(seconds / 60);
  return `Try again in ${minutes} minute${minutes === 1 ? '' : 's'}.`;
}

const REFUSALS = {
  'sign-in': 'Too many sign-in attempts.',
  link: 'Too many attempts from this address.',
  password: 'Too many password attempts.',
} as const;

/** A guess limit's 429: what was refused, and when it may be tried again. */
const refused = (what: keyof typeof REFUSALS, waitMs: number) =>
  rateLimited(`${REFUSALS[what]} ${tryAgainIn(waitMs)}`, waitMs);

export class GuessLimits {
  private readonly window: SlidingWindowRateLimiter;
  private readonly hour: SlidingWindowRateLimiter;
  private readonly inFlight: SlidingWindowRateLimiter;

  constructor(
    redis: Redis,
    keyPrefix: string,
    private readonly devices: TrustedDevices,
  ) {
    this.window = new SlidingWindowRateLimiter(redis, keyPrefix, WINDOW_MS);
    this.hour = new SlidingWindowRateLimiter(redis, keyPrefix, RESET_WINDOW_MS);
    this.inFlight = new SlidingWindowRateLimiter(redis, keyPrefix, IN_FLIGHT_MS);
  }

  /**
   * Counts a sign-in against the account from this address; throws while that pair, the
   * account's failures from all addresses, or the address's failures are over their limits.
   * A device cookie among `deviceValues` (each one sent is checked) that is a trusted device of
   * this account, with attempts left, exempts the attempt from the account's failures and counts
   * against it instead.
   *
   * The attempt is counted as a failure of the address (and of the account, unless trusted)
   * as it is admitted, in the same script that checks those windows: counted only once the
   * password check had failed, every attempt of a burst would pass a nearly full window while
   * the others' hashes ran. `signInSucceeded` takes that failure back.
   */
  async signIn(email: unknown, ip: string | undefined, deviceValues: readonly string[]): Promise<SignInAttempt> {
    const inFlight = await this.startCheck(email);
    try {
      return await this.admitSignIn(email, ip, deviceValues, inFlight);
    } catch (error) {
      await this.endCheck({ email, inFlight });
      throw error;
    }
  }

  private async admitSignIn(
    email: unknown,
    ip: string | undefined,
    deviceValues: readonly string[],
    inFlight: string,
  ): Promise<SignInAttempt> {
    const device = await this.trustedSignIn(email, deviceValues);
    const trusted = device !== null;
    const reserved = [failuresOf(ip), ...(trusted ? [] : [accountFailuresOf(email)])];
    // One script: the pair counts, and the failures are reserved, only when no guard is full.
    // Without a device cookie that is the only Redis call; with one, the device's look-up and
    // its own count come first.
    const member = await this.admit(
      this.window,
      pairOf(email, ip),
      SIGN_IN_LIMIT_PER_ACCOUNT_AND_ADDRESS,
      ip,
      'sign-in',
      trusted ? [] : [{ bucket: accountFailuresOf(email), limit: SIGN_IN_FAILURE_LIMIT_PER_ACCOUNT, reserve: true }],
      true,
    );
    return { email, member, reserved, device, inFlight };
  }

  /** Counts a password check of the account as running; throws while too many are. */
  private async startCheck(email: unknown): Promise<string> {
    const decision = await this.inFlight.consume(accountKey('signin-in-flight', email), SIGN_IN_IN_FLIGHT_PER_ACCOUNT);
    if ('stale' in decision) throw new Error('a guess limit answered a token epoch');
    if (!decision.allowed) throw refused('sign-in', decision.resetMs);
    return decision.member;
  }

  /** The attempt's password check has ended, whatever its outcome: it no longer runs. */
  async endCheck(attempt: Pick<SignInAttempt, 'email' | 'inFlight'>): Promise<void> {
    await this.inFlight.release(accountKey('signin-in-flight', attempt.email), attempt.inFlight);
  }

  /** The password was right: the failures reserved for the attempt are taken back. */
  async signInSucceeded(attempt: SignInAttempt): Promise<void> {
    await Promise.all(attempt.reserved.map((bucket) => this.window.release(bucket, attempt.member)));
  }

  /**
   * A wrong email or password: already counted against the address and (unless from a trusted
   * device) the account when admitted. From a trusted device it counts against the account now,
   * and the device's fifth failure forgets it.
   */
  async signInFailed(attempt: SignInAttempt): Promise<void> {
    if (attempt.device === null) return;
    await this.window.consume(accountFailuresOf(attempt.email), SIGN_IN_FAILURE_LIMIT_PER_ACCOUNT);
    if (attempt.device.attempts >= DEVICE_FAILURE_LIMIT) await this.devices.forget(attempt.device.id, attempt.email);
  }

  /**
   * The trusted device of the account this attempt comes from, if any: its attempt is counted
   * before the password is checked, so attempts sent all at once cannot outrun the device's
   * limit. A device past its limit is forgotten, and the attempt is a stranger's.
   */
  private async trustedSignIn(email: unknown, deviceValues: readonly string[]): Promise<DeviceAttempt | null> {
    const id = await this.devices.trustedFor(deviceValues, email);
    if (id === null) return null;
    const attempts = await this.devices.countAttempt(id);
    if (attempts <= DEVICE_FAILURE_LIMIT) return { id, attempts };
    await this.devices.forget(id, email);
    return null;
  }

  /** Counts a failed guess (a wrong password, a link that is not valid) against the address. */
  async failed(ip: string | undefined): Promise<void> {
    await this.window.consume(failuresOf(ip), FAILURE_LIMIT_PER_ADDRESS);
  }

  /** Before a link is spent: throws while the address is over its limit. */
  async spendLink(ip: string | undefined): Promise<void> {
    await this.admit(this.window, `link-address:${addressBucket(ip)}`, LINK_LIMIT_PER_ADDRESS, ip, 'link');
  }

  /** Before the current password is checked: throws while the account is over its limit. */
  async checkPassword(userId: string, ip: string | undefined): Promise<void> {
    await this.admit(this.window, `password-check:${userId}`, PASSWORD_CHECK_LIMIT_PER_ACCOUNT, ip, 'password');
  }

  /**
   * Whether a reset email may go to this address now. Never throws for a limit: the caller
   * answers alike. From a trusted device of the account the device's count stands in for the
   * account's: a stranger who used up the account's cannot keep its owner from a link.
   */
  async mayEmailReset(email: unknown, ip: string | undefined, deviceValues: readonly string[]): Promise<boolean> {
    const address = await this.hour.consume(`reset-address:${addressBucket(ip)}`, RESET_REQUESTS_PER_ADDRESS);
    if (!('allowed' in address) || !address.allowed) return false;
    const device = await this.devices.trustedFor(deviceValues, email);
    // Every email, from a device or not, is also counted in the account's ceiling, in the same
    // script: its devices (up to ten) must not add up to a flood of emails.
    const ceiling = [
      { bucket: accountKey('reset-account-all', email), limit: RESET_EMAILS_PER_ACCOUNT_ALL, reserve: true },
    ];
    const own =
      device === null
        ? await this.hour.consume(accountKey('reset-account', email), RESET_EMAILS_PER_ACCOUNT, { guards: ceiling })
        : await this.hour.consume(`reset-device:${device}`, RESET_EMAILS_PER_DEVICE, { guards: ceiling });
    return 'allowed' in own && own.allowed;
  }

  private async admit(
    limiter: SlidingWindowRateLimiter,
    bucket: string,
    limit: number,
    ip: string | undefined,
    what: 'sign-in' | 'link' | 'password',
    otherGuards: readonly GuardWindow[] = [],
    reserveAddressFailure = false,
  ): Promise<string> {
    const decision = await limiter.consume(bucket, limit, {
      guards: [
        { bucket: failuresOf(ip), limit: FAILURE_LIMIT_PER_ADDRESS, reserve: reserveAddressFailure },
        ...otherGuards,
      ],
    });
    if ('stale' in decision) throw new Error('a guess limit answered a token epoch');
    if (decision.allowed) return decision.member;
    throw refused(what, decision.resetMs);
  }
}
