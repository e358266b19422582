import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { currentKey, previousKey, type SecretsKeyring } from './secrets-keyring.js';

/**
 * Secrets at rest (a processor's signing secret and API key, the webhook signing secrets):
 * AES-256-GCM with the process's SECRETS_KEY. Stored as `v1.<iv>.<tag>.<ciphertext>` in
 * base64url. The authentication tag makes a tampered or wrongly keyed value fail to open rather
 * than decrypt to garbage, which is also what lets a value be tried with SECRETS_KEY and then
 * SECRETS_KEY_PREVIOUS during a key rotation (secrets-keyring.ts): the wrong key is a clean
 * failure. The value does not say which key sealed it; trying costs one AES-GCM open (about 4 µs).
 */

const VERSION = 'v1';
const IV_BYTES = 12;

/** Seals with SECRETS_KEY: the previous key of a rotation never seals anything. */
export function sealSecret(keys: SecretsKeyring, plaintext: string): string {
  const key = currentKey(keys);
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return [VERSION, iv, cipher.getAuthTag(), ciphertext]
    .map((part) => (typeof part === 'string' ? part : part.toString('base64url')))
    .join('.');
}

export class SecretOpenError extends Error {
  constructor(triedPrevious = false) {
    super(
      triedPrevious
        ? 'a stored secret cannot be decrypted: neither SECRETS_KEY nor SECRETS_KEY_PREVIOUS is the key it was sealed with'
        : 'a stored secret cannot be decrypted: SECRETS_KEY is not the key it was sealed with',
    );
    this.name = 'SecretOpenError';
  }
}

/** Opens with SECRETS_KEY, then SECRETS_KEY_PREVIOUS when one is set; SecretOpenError when neither opens it. */
export function openSecret(keys: SecretsKeyring, sealed: string): string {
  return openSecretTelling(keys, sealed).secret;
}

/**
 * openSecret, also telling which key opened the value: `secrets reseal` re-seals only what the
 * previous key opened, and leaves what SECRETS_KEY already opens as it is.
 */
export function openSecretTelling(
  keys: SecretsKeyring,
  sealed: string,
): { secret: string; openedBy: 'current' | 'previous' } {
  const secret = openWithKey(currentKey(keys), sealed);
  if (secret !== null) return { secret, openedBy: 'current' };
  const previous = previousKey(keys);
  const old = previous === null ? null : openWithKey(previous, sealed);
  if (old === null) throw new SecretOpenError(previous !== null);
  return { secret: old, openedBy: 'previous' };
}

/** The plaintext, or null when `key` is not the key the value was sealed with (or it was changed). */
function openWithKey(key: Buffer, sealed: string): string | null {
  const [version, iv, tag, ciphertext] = sealed.split('.');
  if (version !== VERSION || !iv || !tag || ciphertext === undefined) return null;
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64url')), decipher.final()]).toString('utf8');
  } catch {
    return null;
  }
}

/** What may be shown of a secret after it was entered: its last four characters. */
export function lastFour(secret: string): string {
  return secret.slice(-4);
}
