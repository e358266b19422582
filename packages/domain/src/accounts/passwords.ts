import { argon2, randomBytes, timingSafeEqual, type Argon2Parameters } from 'node:crypto';
import { invalidField } from '@retention/core';

/**
 * Passwords: argon2id from node:crypto (memory-hard), OWASP's minimum profile (19 MiB, 2
 * passes), about 30 ms per hash on purpose. Stored as a PHC string, so the cost can be raised
 * later without losing the old hashes (a hash is verified at the cost it records).
 */
export const MIN_PASSWORD_LENGTH = 10;
export const MAX_PASSWORD_LENGTH = 256;

type Cost = { memory: number; passes: number; parallelism: number };

const OWASP_COST: Cost = { memory: 19_456, passes: 2, parallelism: 1 };
/**
 * INSECURE_FAST_PASSWORD_HASHING=1, for test runs only (docs/decisions.md, "Password hashing in
 * tests"): argon2id at its smallest, a fraction of a millisecond. The test run's sign-ins and
 * sign-ups spent about a ninth of its CPU hashing at the real cost. Never under
 * NODE_ENV=production, where loadConfig refuses the variable at start.
 */
const INSECURE_TEST_COST: Cost = { memory: 64, passes: 1, parallelism: 1 };
const TAG_LENGTH = 32;

/** The cost new hashes are made at: read at each hash, so a test can switch it per file. */
function hashingCost(): Cost {
  const fast = process.env.INSECURE_FAST_PASSWORD_HASHING === '1' && process.env.NODE_ENV !== 'production';
  return fast ? INSECURE_TEST_COST : OWASP_COST;
}

export function assertAcceptablePassword(password: unknown, field = 'password'): string {
  if (typeof password !== 'string') throw invalidField(field, 'must be a string');
  const length = [...password].length;
  if (length < MIN_PASSWORD_LENGTH || length > MAX_PASSWORD_LENGTH) {
    throw invalidField(field, `must be ${MIN_PASSWORD_LENGTH} to ${MAX_PASSWORD_LENGTH} characters`);
  }
  return password;
}

function derive(password: string, nonce: Buffer, cost: Cost) {
  const parameters: Argon2Parameters = { message: password, nonce, tagLength: TAG_LENGTH, ...cost };
  return new Promise<Buffer>((resolve, reject) =>
    argon2('argon2id', parameters, (error, key) => (error ? reject(error) : resolve(key))),
  );
}

export async function hashPassword(password: string): Promise<string> {
  const nonce = randomBytes(16);
  const cost = hashingCost();
  const key = await derive(password, nonce, cost);
  return `$argon2id$v=19$m=${cost.memory},t=${cost.passes},p=${cost.parallelism}$${nonce.toString('base64url')}$${key.toString('base64url')}`;
}

const PHC = /^\$argon2id\$v=19\$m=(\d{1,7}),t=(\d{1,2}),p=(\d{1,2})\$([A-Za-z0-9_-]{16,})\$([A-Za-z0-9_-]{16,})$/;

/** Constant-time comparison of the derived key; false for a malformed hash. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const match = PHC.exec(stored);
  if (!match) return false;
  const expected = Buffer.from(match[5]!, 'base64url');
  const key = await derive(password, Buffer.from(match[4]!, 'base64url'), {
    memory: Number(match[1]),
    passes: Number(match[2]),
    parallelism: Number(match[3]),
  });
  return key.length === expected.length && timingSafeEqual(key, expected);
}

let dummyHash: Promise<string> | undefined;

/**
 * Costs what a real verification costs, for an email that has no password: the answer's
 * timing must not tell an attacker which addresses have accounts.
 */
export async function burnPasswordCheck(password: string): Promise<false> {
  dummyHash ??= hashPassword(randomBytes(18).toString('base64url'));
  await verifyPassword(password, await dummyHash);
  return false;
}
