import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from '@retention/runtime';
import type { ApiMetrics } from '../metrics.js';
import { errorReply } from '../middleware/errors.js';
import { chooseRequestId } from '../middleware/request-id.js';
import { loggablePath, requestLogger } from '../middleware/request-log.js';
import { countWhenDone } from '../middleware/request-metrics.js';
import {
  MAX_EVENT_BYTES,
  STRIPE_WEBHOOK_ROUTE,
  tooLargeBody,
  unreadableBody,
  type StripeReceiver,
} from './stripe-webhooks.js';

/**
 * Stripe's events served by the API's node:http server before Express (docs/decisions.md,
 * "Stripe's events before Express"). Express's middleware chain and router were about a fifth
 * of the CPU of an accepted event; this is what that chain did for this one route, done
 * directly: the `Request-Id` header (the client's if well formed), the request's metrics under
 * the route's pattern, its log line, `Cache-Control: no-store`, the body read raw with the
 * 1 MiB cap counted as it arrives, and errors in the API's JSON shape (errorReply, as the
 * Express error handler gives them).
 *
 * Only what is plainly this route is taken: a POST whose path is `/processor/stripe/` and one
 * segment with no percent sign (case-insensitive, one optional trailing slash, any query, as
 * Express matches it), with no `Content-Encoding` (Express's body parser inflates gzip and
 * refuses unknown encodings). Anything else returns false and goes to Express unchanged, so a
 * wrong method on this path is answered exactly as before, and the Express route, which uses
 * the same receiver, answers the rare request left to it the same way.
 */
const PLAIN_PATH = /^\/processor\/stripe\/([^/?#%]+)\/?(?:\?|$)/i;

type Handler = (req: IncomingMessage, res: ServerResponse) => boolean;

export function stripeBeforeExpress({
  receiver,
  logger,
  metrics,
}: {
  receiver: StripeReceiver;
  logger: Logger;
  metrics: ApiMetrics;
}): Handler {
  const logWhenDone = requestLogger(logger);
  return (req, res) => {
    if (req.method !== 'POST') return false;
    const url = req.url ?? '';
    const connectionId = PLAIN_PATH.exec(url)?.[1];
    if (connectionId === undefined) return false;
    const encoding = req.headers['content-encoding'];
    if (encoding !== undefined && encoding.toLowerCase() !== 'identity') return false;

    const requestId = chooseRequestId(header(req, 'request-id') ?? header(req, 'x-request-id'));
    res.setHeader('Request-Id', requestId);
    res.setHeader('Cache-Control', 'no-store');
    const fail = (error: unknown) => {
      const { status, body } = errorReply(error, logger, { requestId, method: 'POST', path: loggablePath(url) });
      send(res, status, body);
    };
    const body = readBody(req, (outcome) => {
      if (outcome === 'too large') {
        // The rest of the body was read and dropped (a client still sending would not see an
        // answer to a closed connection); this connection is not worth keeping.
        res.setHeader('Connection', 'close');
        send(res, 413, tooLargeBody());
      } else if (outcome === 'unreadable') {
        send(res, 400, unreadableBody());
      } else {
        receiver
          .receive(connectionId, outcome, header(req, 'stripe-signature'))
          .then((reply) => send(res, 200, reply), fail);
      }
    });
    // A client gone before its body was in is answered there and then (to no one), before the
    // metrics and the log line below see the response closed: Express's body parser does so.
    res.once('close', () => {
      if (!req.complete) body.abandon();
    });
    countWhenDone(metrics, 'POST', STRIPE_WEBHOOK_ROUTE, res);
    logWhenDone({ requestId, method: 'POST', url }, res);
    return true;
  };
}

/** A header as Express's `req.get` gives it: repeated ones joined by Node. */
function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value.join(', ') : value;
}

/**
 * The raw body, never more than MAX_EVENT_BYTES of it held: past the cap (declared or
 * counted) the rest is read and dropped, like Express's body parser does before its 413.
 * `abandon`: the client is gone; `done` is called at once with what can be said.
 */
function readBody(
  req: IncomingMessage,
  done: (outcome: Buffer | 'too large' | 'unreadable') => void,
): { abandon(): void } {
  let chunks: Buffer[] | null = Number(req.headers['content-length']) > MAX_EVENT_BYTES ? null : [];
  let size = 0;
  let finished = false;
  const finish = (outcome: Buffer | 'too large' | 'unreadable') => {
    if (finished) return;
    finished = true;
    done(outcome);
  };
  req.on('data', (chunk: Buffer) => {
    size += chunk.length;
    if (size > MAX_EVENT_BYTES) chunks = null;
    chunks?.push(chunk);
  });
  req.on('end', () => {
    const read = chunks;
    // Let go of the chunks: the request's listeners live until the response ends.
    chunks = null;
    if (!read) finish('too large');
    else finish(read.length === 1 ? read[0]! : Buffer.concat(read, size));
  });
  const abandon = () => finish(chunks ? 'unreadable' : 'too large');
  req.on('error', abandon);
  return { abandon };
}

function send(res: ServerResponse, status: number, body: unknown): void {
  if (res.headersSent) return;
  const text = JSON.stringify(body);
  res.statusCode = status;
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(text));
  res.end(text);
}
