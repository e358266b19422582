import {
  createServer,
  maxHeaderSize,
  STATUS_CODES,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { Duplex } from 'node:stream';
import type { Express } from 'express';
import { errorBody, type Config } from '@retention/core';
import { throttledWarn, type Logger } from '@retention/runtime';
import { newRequestId } from './middleware/request-id.js';
import { API_VERSION_HEADER } from './routes/index.js';
import { securityHeaders, withSecurityHeaders } from './security-headers.js';

/**
 * What to tell a client whose request Node's HTTP parser refused, by the parser's code. Node
 * would answer 431, 413 or 408 for these; they are all 400 here, because the only type that
 * fits them is invalid_param and the spec's catalog makes that 400 (docs/decisions.md, "API").
 * The message keeps the difference.
 */
const PARSER_REFUSAL_MESSAGES: Record<string, string> = {
  HPE_HEADER_OVERFLOW: `The request line and headers exceed ${maxHeaderSize} bytes. Shorten the URL (its query string) or the headers.`,
  HPE_CHUNK_EXTENSIONS_OVERFLOW: 'The chunk extensions of the request body are too large.',
  ERR_HTTP_REQUEST_TIMEOUT: 'The request was not received in full in time.',
};

/**
 * A handler the server asks first, before Express: true when it took the request. The Stripe
 * receiver is the one (processor/stripe-before-express.ts); the app registers it when built,
 * so whoever serves the app through createApiServer gets it.
 */
type BeforeExpress = (req: IncomingMessage, res: ServerResponse) => boolean;
const beforeExpress = new WeakMap<Express, BeforeExpress>();

export function serveBeforeExpress(app: Express, handler: BeforeExpress): void {
  beforeExpress.set(app, handler);
}

/**
 * The API's HTTP server: main.ts and the tests both serve the app through this, so the tests
 * cover what production runs.
 *
 * Requests that Node's HTTP parser refuses (a URL and headers over `maxHeaderSize`, a
 * malformed header, a control character in the request line) never reach Express. Node's own
 * answer is a bare status line; this one keeps the API's promises instead: the JSON error
 * shape, a `Request-Id`, and a log line with the same id. The connection is closed after it,
 * as Node does: the parser cannot tell where the next request would begin.
 */
export type ServerLimits = Pick<
  Config,
  'apiHeadersTimeoutMs' | 'apiRequestTimeoutMs' | 'apiMaxConnections' | 'baseUrl'
>;

/**
 * Slow clients (slowloris) are bounded: Node's defaults would let a connection dribble its
 * headers for 60 s and its request for 300 s, with no cap on connections. The timeouts are
 * checked every second rather than Node's 30, so they hold to about a second; a request not
 * in by then gets the JSON 400 below. Connections over the cap are closed on arrival.
 */
export function createApiServer(app: Express, logger: Logger, limits: ServerLimits): Server {
  const first = beforeExpress.get(app);
  const security = securityHeaders(limits.baseUrl);
  const server = createServer(
    {
      headersTimeout: limits.apiHeadersTimeoutMs,
      requestTimeout: limits.apiRequestTimeoutMs,
      connectionsCheckingInterval: Math.min(1_000, limits.apiHeadersTimeoutMs / 2),
      // Node's own refusal of an HTTP/1.1 request without Host is a bare 400 with no body;
      // refuseWithoutHost answers it with the API's shape instead.
      requireHostHeader: false,
    },
    // On every answer, whoever gives it: set before anything can write.
    withSecurityHeaders(limits.baseUrl, (req, res) => {
      if (lacksHost(req)) refuseWithoutHost(res, logger);
      else if (!first?.(req, res)) app(req, res);
    }),
  );
  server.maxConnections = limits.apiMaxConnections;
  const warn = throttledWarn(logger);
  server.on('drop', () =>
    warn(
      'connection cap',
      new Error(`API_MAX_CONNECTIONS (${limits.apiMaxConnections}) reached`),
      'connection refused: too many open connections',
    ),
  );
  server.on('clientError', (error: NodeJS.ErrnoException & { reason?: string }, socket: Duplex) => {
    // A connection reset or already closed: nobody is there to answer.
    if (error.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    const message =
      PARSER_REFUSAL_MESSAGES[error.code ?? ''] ??
      `Malformed HTTP request${error.reason ? ` (${error.reason.replace(/\.$/, '')})` : ''}.`;
    // The raw bytes are not logged: they may hold a token or a customer's email address.
    const { headers, body } = refusal(logger, error.code, message);
    Object.assign(headers, security);
    // Node's check before its own answer: an earlier response on this connection that has
    // begun must not have another written into its middle.
    const inFlight = (socket as Duplex & { _httpMessage?: ServerResponse | null })._httpMessage;
    if (inFlight?.headersSent) {
      socket.destroy();
      return;
    }
    const head = [
      `HTTP/1.1 400 ${STATUS_CODES[400]}`,
      ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`),
    ].join('\r\n');
    socket.end(`${head}\r\n\r\n${body}`, () => socket.destroy());
  });
  return server;
}

/** HTTP/1.1 requires a Host header (RFC 9112, 3.2); HTTP/1.0 has none to require. */
function lacksHost(req: IncomingMessage): boolean {
  return req.httpVersionMajor === 1 && req.httpVersionMinor >= 1 && req.headers.host === undefined;
}

/**
 * The refusal Node would make of a request without Host, in the API's shape, logged like the
 * parser's.
 */
function refuseWithoutHost(res: ServerResponse, logger: Logger): void {
  const { headers, body } = refusal(logger, 'MISSING_HOST', 'An HTTP/1.1 request needs a Host header.');
  res.shouldKeepAlive = false;
  res.writeHead(400, headers);
  res.end(body);
}

/**
 * A request refused before Express: logged with a fresh Request-Id (its raw bytes never), and
 * answered 400 invalid_param in the API's JSON shape, closing the connection. It carries the API's
 * version header whatever its path (which a refused request may not have had read): the API did
 * answer it, and the SDK takes an answer without the header for a proxy's (docs/api.md).
 */
function refusal(
  logger: Logger,
  code: string | undefined,
  message: string,
): { headers: Record<string, string | number>; body: string } {
  const requestId = newRequestId();
  logger.info({ requestId, status: 400, code }, 'request refused by the HTTP parser');
  const body = JSON.stringify(errorBody('invalid_param', message));
  return {
    headers: {
      'Content-Type': 'application/json; charset=utf-8',
      'Content-Length': Buffer.byteLength(body),
      'Request-Id': requestId,
      'Cache-Control': 'no-store',
      [API_VERSION_HEADER.name]: API_VERSION_HEADER.value,
      Connection: 'close',
    },
    body,
  };
}
