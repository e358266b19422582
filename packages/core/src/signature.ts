import { createHmac } from 'node:crypto';

/**
 * Webhook signatures (docs/webhooks.md, "Verifying the signature"):
 * header `X-Service-Signature: t=<unix_seconds>,v1=<hex>`,
 * where v1 = HMAC-SHA256 over `<t>.<raw_body>` keyed with the endpoint's whole `whsec_` secret.
 */
export const SIGNATURE_HEADER = 'X-Service-Signature';
/** What signatureHeader writes: a `t`, then one `v1` per signing secret (two during a roll's overlap). */
export const SIGNATURE_HEADER_PATTERN = '^t=[0-9]+(,v1=[0-9a-f]{64}){1,2}$';
/** Seconds a receiver should allow between `t` and its clock (spec part 8, the replay window). */
export const SIGNATURE_TOLERANCE_SECONDS = 300;

export function computeSignature(secret: string, timestamp: number, rawBody: Buffer | string): string {
  return createHmac('sha256', secret)
    .update(`${timestamp}.`, 'utf8')
    .update(typeof rawBody === 'string' ? Buffer.from(rawBody, 'utf8') : rawBody)
    .digest('hex');
}

/**
 * One `v1` per secret, newest first: during a Roll secret overlap both the new and the old
 * secret sign, Stripe's convention, so a receiver holding either verifies.
 */
export function signatureHeader(
  secret: string | readonly string[],
  timestamp: number,
  rawBody: Buffer | string,
): string {
  const secrets = typeof secret === 'string' ? [secret] : secret;
  return [`t=${timestamp}`, ...secrets.map((each) => `v1=${computeSignature(each, timestamp, rawBody)}`)].join(',');
}
