import { openSecret, SecretOpenError, toIsoMillisOrNull, type SecretsKeyring } from '@retention/core';
import type { AttemptResult, WebhookSender } from './sender.js';

/**
 * Webhook signing secrets at rest (docs/decisions.md, "Tokens and secrets"): sealed with
 * SECRETS_KEY (sealSecret) by every writer, opened by every signer, never stored or logged in
 * the clear. An endpoint's row holds `signing_secret_sealed` and, during a Roll secret's
 * overlap, `previous_signing_secret_sealed`.
 */

export interface SealedSigningSecrets {
  signing_secret_sealed: string;
  previous_signing_secret_sealed: string | null;
  previous_secret_expires_at: Date | null;
}

/**
 * The secrets that sign a request now: the current one, then the previous while its overlap
 * lasts (new first, one `v1` each). Each is opened with SECRETS_KEY, or SECRETS_KEY_PREVIOUS
 * during a key rotation (openSecret). Throws SecretOpenError when no key can open one
 * of them: a request is never signed with fewer secrets than it should carry, nor unsigned.
 */
export function openSigningSecrets(secretsKey: SecretsKeyring, row: SealedSigningSecrets, now = Date.now()): string[] {
  const current = openSecret(secretsKey, row.signing_secret_sealed);
  const previous = openOverlapEnd(row.previous_secret_expires_at, now) ? row.previous_signing_secret_sealed : null;
  return previous === null ? [current] : [current, openSecret(secretsKey, previous)];
}

/**
 * When the previous secret stops signing (ISO), or null when none is in its overlap now: the
 * test openSigningSecrets signs by, so what the dashboard shows is what the worker signs with.
 */
export function openOverlapEnd(previousExpiresAt: Date | null, now = Date.now()): string | null {
  return previousExpiresAt && previousExpiresAt.getTime() > now ? toIsoMillisOrNull(previousExpiresAt) : null;
}

/**
 * What the delivery log says of an attempt whose secret SECRETS_KEY cannot open (a database
 * sealed under another key): nothing was sent. It names the setting, as the processor's parked
 * events do (`last_error`), so the operator knows what to fix.
 */
export const UNREADABLE_SECRET_ERROR =
  'not sent: the signing secret cannot be decrypted (SECRETS_KEY is not the key it was sealed with)';

/** The failed attempt recorded instead of a request when the secret cannot be opened. */
export function unreadableSecretAttempt(attemptedAt = new Date()): AttemptResult {
  return {
    succeeded: false,
    httpStatus: null,
    error: UNREADABLE_SECRET_ERROR,
    responseBody: null,
    durationMs: 0,
    attemptedAt,
  };
}

/**
 * Sends `body` signed with the secrets `secrets` opens; when SECRETS_KEY cannot open them,
 * sends nothing and answers the failed attempt that says so (Send test and Resend).
 */
export async function sendSigned(
  sender: WebhookSender,
  url: string,
  body: Buffer,
  secrets: () => string[] | Promise<string[]>,
): Promise<AttemptResult> {
  let secret: string[];
  try {
    secret = await secrets();
  } catch (error) {
    if (error instanceof SecretOpenError) return unreadableSecretAttempt();
    throw error;
  }
  return sender.send({ url, secret, body });
}
