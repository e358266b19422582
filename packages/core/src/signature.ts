import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Webhook signatures (spec 5.2): header `X-Service-Signature: t=<unix_seconds>,v1=<hex>`,
 * where v1 = HMAC-SHA256 over `<t>.<raw_body>` keyed with the endpoint's whole `whsec_` secret.
 */
export const SIGNATURE_HEADER = 'X-Service-Signature';
export const DEFAULT_SIGNATURE_TOLERANCE_SECONDS = 300;

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

export type SignatureFailure = 'malformed_header' | 'signature_mismatch' | 'timestamp_out_of_tolerance';

export class SignatureVerificationError extends Error {
  readonly reason: SignatureFailure;

  constructor(reason: SignatureFailure, message: string) {
    super(message);
    this.name = 'SignatureVerificationError';
    this.reason = reason;
  }
}

export interface ParsedSignatureHeader {
  timestamp: number;
  signatures: string[];
}

const HEX_SHA256 = /^[0-9a-f]{64}$/;
/**
 * `t` exactly as the signer writes a number: no sign, leading zero, fraction, exponent or
 * space. The HMAC covers the header's literal `t` text, so this is the only spelling whose
 * value and text agree (`01772875000` would be the same time over different bytes).
 */
const UNIX_SECONDS = /^(0|[1-9]\d{0,11})$/;

/**
 * Splits the header on commas into `t` and one or more `v1`; unknown keys are ignored.
 * Spaces may surround an element (a proxy joining repeated headers adds them), never sit
 * inside one: keys and values are taken literally.
 */
export function parseSignatureHeader(header: string | undefined | null): ParsedSignatureHeader {
  if (typeof header !== 'string' || header.length === 0 || header.length > 1024) {
    throw new SignatureVerificationError('malformed_header', 'The signature header is missing or too long.');
  }
  let timestamp: number | undefined;
  const signatures: string[] = [];
  for (const part of header.split(',')) {
    const element = part.trim();
    const separator = element.indexOf('=');
    if (separator <= 0) {
      throw new SignatureVerificationError(
        'malformed_header',
        'Every element of the signature header must be key=value.',
      );
    }
    const key = element.slice(0, separator);
    const value = element.slice(separator + 1);
    if (key === 't') {
      if (timestamp !== undefined || !UNIX_SECONDS.test(value)) {
        throw new SignatureVerificationError(
          'malformed_header',
          'The signature header needs exactly one t=<unix seconds>.',
        );
      }
      timestamp = Number(value);
    } else if (key === 'v1') {
      if (!HEX_SHA256.test(value)) {
        throw new SignatureVerificationError('malformed_header', 'v1 must be 64 lowercase hexadecimal characters.');
      }
      signatures.push(value);
    }
  }
  if (timestamp === undefined || signatures.length === 0) {
    throw new SignatureVerificationError(
      'malformed_header',
      'The signature header needs t=<unix seconds> and v1=<hex>.',
    );
  }
  return { timestamp, signatures };
}

export interface VerifyOptions {
  toleranceSeconds?: number;
  /** The current time in unix seconds; injectable for tests. */
  nowSeconds?: number;
}

/**
 * Verifies the header against the exact raw bytes received. Throws a
 * SignatureVerificationError naming the failure; returns the signed timestamp otherwise.
 */
export function verifySignature(
  rawBody: Buffer | string,
  header: string | undefined | null,
  secret: string,
  options: VerifyOptions = {},
): number {
  const { timestamp, signatures } = parseSignatureHeader(header);
  const expected = Buffer.from(computeSignature(secret, timestamp, rawBody), 'utf8');
  // Compare against every v1 without stopping early, in constant time per candidate.
  let matched = false;
  for (const candidate of signatures) {
    if (timingSafeEqual(expected, Buffer.from(candidate, 'utf8'))) matched = true;
  }
  if (!matched) {
    throw new SignatureVerificationError('signature_mismatch', 'No signature in the header matches the body.');
  }
  const tolerance = options.toleranceSeconds ?? DEFAULT_SIGNATURE_TOLERANCE_SECONDS;
  const now = options.nowSeconds ?? Math.floor(Date.now() / 1000);
  if (Math.abs(now - timestamp) > tolerance) {
    throw new SignatureVerificationError(
      'timestamp_out_of_tolerance',
      `The signature timestamp is more than ${tolerance} seconds away from the current time.`,
    );
  }
  return timestamp;
}
