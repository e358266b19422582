import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

/**
 * Secrets at rest (a processor's signing secret and API key): AES-256-GCM with the process's
 * SECRETS_KEY. Stored as `v1.<iv>.<tag>.<ciphertext>` in base64url, so a later key rotation
 * can add `v2` beside it. The authentication tag makes a tampered or wrongly keyed value fail
 * to open rather than decrypt to garbage.
 */

const VERSION = 'v1';
const IV_BYTES = 12;

export function sealSecret(key: Buffer, plaintext: string): string {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return [VERSION, iv, cipher.getAuthTag(), ciphertext]
    .map((part) => (typeof part === 'string' ? part : part.toString('base64url')))
    .join('.');
}

export class SecretOpenError extends Error {
  constructor() {
    super('a stored secret cannot be decrypted: SECRETS_KEY is not the key it was sealed with');
    this.name = 'SecretOpenError';
  }
}

export function openSecret(key: Buffer, sealed: string): string {
  const [version, iv, tag, ciphertext] = sealed.split('.');
  if (version !== VERSION || !iv || !tag || ciphertext === undefined) throw new SecretOpenError();
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64url')), decipher.final()]).toString('utf8');
  } catch {
    throw new SecretOpenError();
  }
}

/** What may be shown of a secret after it was entered: its last four characters. */
export function lastFour(secret: string): string {
  return secret.slice(-4);
}
