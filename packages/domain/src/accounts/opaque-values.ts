import { createHash, randomBytes } from 'node:crypto';

/**
 * Session cookies and one-time links: 32 random bytes (base64url) handed to the user once;
 * only their SHA-256 is stored, so a leaked database opens no session and no link.
 */
export function newOpaqueValue(): { value: string; hash: string } {
  const value = randomBytes(32).toString('base64url');
  return { value, hash: hashOpaqueValue(value) };
}

export function hashOpaqueValue(value: string): string {
  return createHash('sha256').update(value, 'utf8').digest('hex');
}

/** What a well-formed value looks like; anything else is refused before a query. */
export const OPAQUE_VALUE = /^[A-Za-z0-9_-]{43}$/;
