import { createHmac, timingSafeEqual } from 'node:crypto';
import type { WebhookEvent } from '../events.js';

/**
 * Webhook signature verification (the receiver's guide, "Verifying the signature"). Each delivery carries
 * `X-Service-Signature: t=<unix seconds>,v1=<hex>`, where v1 is the HMAC-SHA256 of
 * `<t>.<raw body>` keyed with the endpoint's whole `whsec_...` signing secret.
 */

/** The header's name as Node presents it in `req.headers`. */
export const SIGNATURE_HEADER = 'x-service-signature';
/** The replay window the service recommends to receivers (300 s). */
export const DEFAULT_TOLERANCE_SECONDS = 300;

const MAX_HEADER_LENGTH = 4096;
/**
 * `t` exactly as the service writes a number: no sign, leading zero, fraction, exponent or
 * space. The HMAC covers the header's literal `t` text, so this is the only spelling whose
 * value and text agree (`01772875000` would be the same time over different bytes).
 */
const UNIX_SECONDS = /^(0|[1-9]\d{0,11})$/;
const HEX_SHA256 = /^[0-9a-f]{64}$/;

export type WebhookVerificationFailure =
  'malformed_header' | 'signature_mismatch' | 'timestamp_out_of_tolerance' | 'invalid_payload';

/** Why a delivery was refused. A receiver answers 401, 400 for `invalid_payload`. */
export class WebhookVerificationError extends Error {
  override readonly name: string = 'WebhookVerificationError';
  readonly type: WebhookVerificationFailure;

  constructor(type: WebhookVerificationFailure, message: string, options?: ErrorOptions) {
    super(message, options);
    this.type = type;
  }
}

/** The signature header is missing, or is not `t=<unix seconds>,v1=<64 hex>[,v1=...]`. */
export class WebhookHeaderError extends WebhookVerificationError {
  override readonly name = 'WebhookHeaderError';
  declare readonly type: 'malformed_header';

  constructor(message: string) {
    super('malformed_header', message);
  }
}

/** No v1 in the header matches the body: a wrong secret, or a body changed on the way. */
export class WebhookSignatureError extends WebhookVerificationError {
  override readonly name = 'WebhookSignatureError';
  declare readonly type: 'signature_mismatch';

  constructor(message: string) {
    super('signature_mismatch', message);
  }
}

/** The signed time is further from now than the tolerance: a replay, or a skewed clock. */
export class WebhookTimestampError extends WebhookVerificationError {
  override readonly name = 'WebhookTimestampError';
  declare readonly type: 'timestamp_out_of_tolerance';
  /** The signed time, in unix seconds. */
  readonly timestamp: number;

  constructor(message: string, timestamp: number) {
    super('timestamp_out_of_tolerance', message);
    this.timestamp = timestamp;
  }
}

/** Correctly signed, but not an event document (`type`, `created_at`, `data`). */
export class WebhookPayloadError extends WebhookVerificationError {
  override readonly name = 'WebhookPayloadError';
  declare readonly type: 'invalid_payload';

  constructor(message: string, options?: ErrorOptions) {
    super('invalid_payload', message, options);
  }
}

export interface VerifyWebhookOptions {
  /** Largest accepted distance between the signed time and now, either way. Default 300. */
  toleranceSeconds?: number;
  /** The current time; injectable for tests. */
  now?: Date;
}

/**
 * Checks a delivery and returns its event. `rawBody` must be the exact bytes received
 * (a Buffer, or the same text as a string): never JSON that was parsed and serialised again.
 * `signatureHeader` is the X-Service-Signature header, e.g. `req.headers['x-service-signature']`.
 * Throws a WebhookVerificationError subclass when the delivery must be refused.
 *
 * New event types may be added to the service: keep a `default` branch when switching on
 * `event.type`, and answer 2xx to types you do not handle.
 */
export function verifyWebhook(
  rawBody: string | Uint8Array,
  signatureHeader: string | readonly string[] | null | undefined,
  secret: string,
  options: VerifyWebhookOptions = {},
): WebhookEvent {
  const body = bodyBytes(rawBody);
  if (typeof secret !== 'string' || secret === '') {
    throw new TypeError("verifyWebhook needs the endpoint's signing secret (whsec_...).");
  }
  const tolerance = options.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS;
  if (typeof tolerance !== 'number' || !Number.isFinite(tolerance) || tolerance < 0) {
    throw new TypeError(`toleranceSeconds must be a number of 0 or more, got ${String(tolerance)}.`);
  }
  const now = options.now ?? new Date();
  if (!(now instanceof Date) || Number.isNaN(now.getTime())) throw new TypeError('`now` must be a valid Date.');

  const { timestamp, signatures } = parseSignatureHeader(signatureHeader);
  // `t` is canonical, so the number prints back as exactly the text that was signed.
  const expected = createHmac('sha256', secret).update(`${timestamp}.`, 'utf8').update(body).digest();
  // Every candidate is compared, in constant time, without stopping at the first match.
  let matched = false;
  for (const signature of signatures) {
    if (timingSafeEqual(Buffer.from(signature, 'hex'), expected)) matched = true;
  }
  if (!matched) throw new WebhookSignatureError('No signature in the header matches the body and the secret.');

  const skew = Math.floor(now.getTime() / 1000) - timestamp;
  if (Math.abs(skew) > tolerance) {
    throw new WebhookTimestampError(
      skew > 0
        ? `The delivery was signed ${skew} seconds ago, more than the ${tolerance} allowed: possibly a replay.`
        : `The delivery is signed ${-skew} seconds in the future, more than the ${tolerance} allowed: check the clock.`,
      timestamp,
    );
  }
  return parseEvent(body);
}

export interface ParsedSignatureHeader {
  timestamp: number;
  signatures: string[];
}

/**
 * Splits the header into its `t` and its `v1` values; other keys (future schemes) are ignored.
 * A header received more than once (an array in Node's `req.headers`) counts as one, joined
 * with commas, as HTTP defines. Spaces may surround an element (joining adds them), never sit
 * inside one: keys and values are taken literally.
 */
export function parseSignatureHeader(value: unknown): ParsedSignatureHeader {
  const header = Array.isArray(value) ? value.join(',') : value;
  if (typeof header !== 'string' || header.trim() === '') {
    throw new WebhookHeaderError('The X-Service-Signature header is missing.');
  }
  if (header.length > MAX_HEADER_LENGTH) throw new WebhookHeaderError('The X-Service-Signature header is too long.');
  let timestamp: number | undefined;
  const signatures: string[] = [];
  for (const part of header.split(',')) {
    const element = part.trim();
    const separator = element.indexOf('=');
    if (separator <= 0) throw new WebhookHeaderError('Every element of the signature header must be key=value.');
    const key = element.slice(0, separator);
    const value = element.slice(separator + 1);
    if (key === 't') {
      if (timestamp !== undefined) throw new WebhookHeaderError('The signature header has more than one t.');
      if (!UNIX_SECONDS.test(value)) {
        throw new WebhookHeaderError('t must be a unix time in seconds, written as a plain whole number.');
      }
      timestamp = Number(value);
    } else if (key === 'v1') {
      if (!HEX_SHA256.test(value)) throw new WebhookHeaderError('v1 must be 64 lowercase hexadecimal characters.');
      signatures.push(value);
    }
  }
  if (timestamp === undefined) throw new WebhookHeaderError('The signature header has no t=<unix seconds>.');
  if (signatures.length === 0) throw new WebhookHeaderError('The signature header has no v1=<signature>.');
  return { timestamp, signatures };
}

function bodyBytes(rawBody: unknown): Buffer {
  if (typeof rawBody === 'string') return Buffer.from(rawBody, 'utf8');
  if (rawBody instanceof Uint8Array) return Buffer.from(rawBody.buffer, rawBody.byteOffset, rawBody.byteLength);
  throw new TypeError(
    'verifyWebhook needs the raw request body as a Buffer or a string, not a parsed object: ' +
      "the signature covers the exact bytes sent. With Express, use express.raw({ type: 'application/json' }) " +
      'or webhookMiddleware() on the webhook route instead of express.json().',
  );
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

function parseEvent(body: Buffer): WebhookEvent {
  let event: unknown;
  try {
    event = JSON.parse(utf8.decode(body));
  } catch (error) {
    throw new WebhookPayloadError('The signed body is not UTF-8 JSON.', { cause: error });
  }
  if (
    typeof event !== 'object' ||
    event === null ||
    Array.isArray(event) ||
    !('type' in event && typeof event.type === 'string' && event.type !== '') ||
    !('created_at' in event && typeof event.created_at === 'string') ||
    !('data' in event && typeof event.data === 'object' && event.data !== null && !Array.isArray(event.data))
  ) {
    throw new WebhookPayloadError('The signed body is not an event: it needs type, created_at and data.');
  }
  return event as WebhookEvent;
}
