import { createHash } from 'node:crypto';
import { randomBase62 } from './ids.js';

export const API_TOKEN_PREFIX = 'sk_live_';
export const SIGNING_SECRET_PREFIX = 'whsec_';

/** 32 base62 characters ≈ 190 bits of randomness (the floor is 128). */
const TOKEN_RANDOM_CHARS = 32;
/** 43 base62 characters ≈ 256 bits of randomness (the floor is 192). */
const SIGNING_SECRET_RANDOM_CHARS = 43;

export interface MintedToken {
  /** The full value: shown once, never stored. */
  token: string;
  /** SHA-256 of the full value, lowercase hex: the only form that is stored. */
  hash: string;
  /** The last four characters, so an operator can tell tokens apart in a list. */
  hint: string;
}

export function mintApiToken(): MintedToken {
  const token = API_TOKEN_PREFIX + randomBase62(TOKEN_RANDOM_CHARS);
  return { token, hash: hashApiToken(token), hint: token.slice(-4) };
}

export function hashApiToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

export function newSigningSecret(): string {
  return SIGNING_SECRET_PREFIX + randomBase62(SIGNING_SECRET_RANDOM_CHARS);
}

// No word boundary before the prefix: a secret glued to a word character (`/x/1sk_live_…`,
// `a%2Fsk_live_…`, `_whsec_…`) is still a secret. Masking the odd `task_live_…` is the cheap side.
// Stripe's secret and restricted keys (sk_/rk_, live or test) are masked like ours, in the
// starred form its errors name a key by too (`rk_live_****1234`).
const SECRET_PATTERN = /(sk_live_|sk_test_|rk_live_|rk_test_|whsec_)[*0-9A-Za-z_-]+/g;

/**
 * Text with every credential in it masked, its prefix kept (`sk_live_[redacted]`): log lines
 * (the runtime's logger) and a processor's words shown to a person (a refused Stripe key).
 */
export function scrubSecrets(text: string): string {
  return text.replace(SECRET_PATTERN, '$1[redacted]');
}
