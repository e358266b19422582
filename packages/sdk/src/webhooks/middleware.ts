import type { IncomingMessage, ServerResponse } from 'node:http';
import type { WebhookEvent } from '../events.js';
import { SIGNATURE_HEADER, verifyWebhook, WebhookPayloadError, WebhookVerificationError } from './verify.js';

export interface WebhookMiddlewareOptions {
  /** The endpoint's signing secret (`whsec_...`). */
  secret: string;
  /** Largest accepted distance between the signed time and now. Default 300 seconds. */
  toleranceSeconds?: number;
  /** Larger bodies are refused with 413 without being read. Default 1 MiB. */
  maxBodyBytes?: number;
  /**
   * Called with each refusal as it is answered (the status and the body's `type` and `message`),
   * to log why: a 401 alone does not say whether the secret is wrong or the clock is off.
   */
  onRefused?: (refusal: WebhookRefusal, req: IncomingMessage) => void;
}

/** A delivery the middleware refused: what it answered. */
export interface WebhookRefusal {
  status: 400 | 401 | 413;
  type: string;
  message: string;
}

/**
 * Express-compatible (and plain `node:http`-compatible) middleware. Typed structurally on
 * Node's own request and response, so it needs no Express types.
 */
export type WebhookMiddleware = (req: IncomingMessage, res: ServerResponse, next: (error?: unknown) => void) => void;

const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;
const EVENT_PROPERTY = 'webhookEvent';

class BodyTooLargeError extends Error {}

/**
 * Reads the raw body itself (mount it before any body parser on this route), or takes the
 * bytes a parser kept: `req.body` after `express.raw()`/`express.text()`, or `req.rawBody`
 * (set by hosts such as Cloud Functions, or by `express.json({ verify })`). It verifies the
 * signature and the timestamp, and either answers 401 (400 for a signed body that is not an
 * event, 413 for one too large), or sets `req.webhookEvent` and calls `next()`. Read the event
 * with `webhookEventOf(req)`. A body parsed with no raw bytes kept cannot be verified: that
 * is a setup mistake, reported through `next(error)` to the app's error handling.
 */
export function webhookMiddleware(options: WebhookMiddlewareOptions): WebhookMiddleware {
  const { secret, toleranceSeconds, onRefused } = options;
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  if (typeof secret !== 'string' || secret === '') {
    throw new TypeError("webhookMiddleware needs the endpoint's signing secret (whsec_...).");
  }
  if (!Number.isSafeInteger(maxBodyBytes) || maxBodyBytes < 1) {
    throw new TypeError(`maxBodyBytes must be a whole number of bytes, got ${String(maxBodyBytes)}.`);
  }

  return (req, res, next) => {
    rawBodyOf(req, maxBodyBytes).then(
      (body) => {
        let event: WebhookEvent;
        try {
          event = verifyWebhook(body, req.headers[SIGNATURE_HEADER], secret, {
            ...(toleranceSeconds !== undefined && { toleranceSeconds }),
          });
        } catch (error) {
          if (!(error instanceof WebhookVerificationError)) return next(error);
          const status = error instanceof WebhookPayloadError ? 400 : 401;
          return refuse(req, res, { status, type: error.type, message: error.message }, onRefused);
        }
        Object.defineProperty(req, EVENT_PROPERTY, { value: event, enumerable: true, configurable: true });
        next();
      },
      (error: unknown) => {
        if (error instanceof BodyTooLargeError) {
          // Stop reading and close the connection after answering: the rest is never buffered.
          res.setHeader('Connection', 'close');
          return refuse(req, res, { status: 413, type: 'payload_too_large', message: error.message }, onRefused);
        }
        next(error);
      },
    );
  };
}

/** The event `webhookMiddleware` verified for this request. */
export function webhookEventOf(req: IncomingMessage): WebhookEvent {
  const event = (req as IncomingMessage & { [EVENT_PROPERTY]?: WebhookEvent })[EVENT_PROPERTY];
  if (!event)
    throw new Error('No verified webhook event on this request: mount webhookMiddleware() before this handler.');
  return event;
}

/** Answers a refusal in the JSON error shape, then tells `onRefused` of it. */
function refuse(
  req: IncomingMessage,
  res: ServerResponse,
  refusal: WebhookRefusal,
  onRefused: WebhookMiddlewareOptions['onRefused'],
): void {
  res.statusCode = refusal.status;
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.end(JSON.stringify({ error: { type: refusal.type, message: refusal.message } }));
  onRefused?.(refusal, req);
}

const isRawBytes = (value: unknown): value is Uint8Array | string =>
  value instanceof Uint8Array || typeof value === 'string';

function rawBodyOf(
  req: IncomingMessage & { body?: unknown; rawBody?: unknown },
  limit: number,
): Promise<Uint8Array | string> {
  // A raw or text body parser already ran on this route: its bytes are the body.
  if (isRawBytes(req.body)) return Promise.resolve(req.body);
  // A JSON parser ran, but the exact bytes were kept beside the parsed object.
  if (isRawBytes(req.rawBody)) return Promise.resolve(req.rawBody);
  if (req.body !== undefined || req.readableEnded) {
    return Promise.reject(
      new Error(
        'The webhook body was already parsed (by express.json() or similar) and its raw bytes were not kept, ' +
          'so its signature cannot be checked. Mount webhookMiddleware() before body parsers on the webhook route, ' +
          "use express.raw({ type: 'application/json' }) there, or keep the bytes with " +
          'express.json({ verify: (req, _res, buf) => { req.rawBody = buf } }).',
      ),
    );
  }
  const tooLarge = () => new BodyTooLargeError(`The body is larger than the ${limit} bytes this receiver accepts.`);
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) return Promise.reject(tooLarge());

  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let received = 0;
    const cleanUp = () => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('close', onClose);
    };
    const onData = (chunk: Buffer) => {
      received += chunk.length;
      if (received > limit) {
        cleanUp();
        req.pause();
        return reject(tooLarge());
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      cleanUp();
      resolve(Buffer.concat(chunks, received));
    };
    const onError = (error: Error) => {
      cleanUp();
      reject(error);
    };
    const onClose = () => {
      cleanUp();
      reject(new Error('The client closed the connection before the body was complete.'));
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('close', onClose);
  });
}
