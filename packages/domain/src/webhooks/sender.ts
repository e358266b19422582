import https from 'node:https';
import { isIP, type Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import type { Duplex } from 'node:stream';
import type { Got } from 'got';
import { firstUse, signatureHeader, SIGNATURE_HEADER, type Config } from '@retention/core';
import {
  assertReceiverAddress,
  nonPublicRange,
  receiverLookup,
  RefusedAddressError,
  unresolvedHostMessage,
} from './address-guard.js';
import { createReceiverResolver, type ReceiverResolver } from './dns-resolver.js';

/**
 * One webhook request (docs/webhooks.md, "The request" and "Verifying the signature"): POST,
 * signed over the exact bytes sent with a fresh `t`, and nothing on the wire but the three
 * named headers plus Host, Content-Length and Connection. No redirects followed, no
 * decompression, one timeout for the whole attempt, and at most RESPONSE_LOG_BYTES of the
 * answer read: a receiver that streams gigabytes costs us 4 KB. The send never throws: every
 * outcome is an AttemptResult for the delivery log.
 */

export const RESPONSE_LOG_BYTES = 4096;
/**
 * Once the status line is in, the outcome is decided (any 2xx is success: docs/webhooks.md); the body
 * is read only for the log, for at most this long, so a receiver that answers 200 and keeps
 * the body open is a success with what arrived, not a timeout retried as a duplicate.
 */
export const RESPONSE_BODY_READ_MS = 500;
/**
 * A kept-alive socket idle this long is closed: receivers come and go, and each idle socket
 * holds a file descriptor (and memory on both ends) for nothing.
 */
export const IDLE_SOCKET_MS = 15_000;
/**
 * Sockets open at once, busy and idle, across every receiver. Busy ones are bounded by the
 * worker's concurrency (100 slots); this bounds the idle ones, which give way (the oldest
 * is closed) when a request to another receiver needs the room.
 */
export const MAX_TOTAL_SOCKETS = 256;

export function webhookUserAgent(baseUrl: string): string {
  return `Service-Webhooks/1 (+${baseUrl})`;
}

export interface WebhookSenderOptions {
  timeoutMs: number;
  /** The service's public URL, named in the User-Agent. */
  baseUrl: string;
  allowPrivateNetworks: boolean;
  /**
   * A CA to trust instead of the system's. Only for tests that run the worker in their own
   * process, where NODE_EXTRA_CA_CERTS (read by Node at start-up) cannot be set in time.
   */
  ca?: string | Buffer;
  /** Name servers for receivers' host names (WEBHOOK_DNS_SERVERS); the system's when absent. */
  dnsServers?: string[] | undefined;
  /** Defaults IDLE_SOCKET_MS and MAX_TOTAL_SOCKETS; tests make them small. */
  idleSocketMs?: number;
  maxTotalSockets?: number;
}

/**
 * A sender's options from the service's configuration: the worker, the dashboard's Send test
 * and Resend, and the CLI's all reach receivers the same way (the same timeout, the same
 * private-network rule, the same name servers).
 */
export function webhookSenderOptions(
  config: Pick<Config, 'webhookTimeoutMs' | 'baseUrl' | 'webhookAllowPrivateNetworks' | 'webhookDnsServers'>,
): WebhookSenderOptions {
  return {
    timeoutMs: config.webhookTimeoutMs,
    baseUrl: config.baseUrl,
    allowPrivateNetworks: config.webhookAllowPrivateNetworks,
    ...(config.webhookDnsServers && { dnsServers: config.webhookDnsServers }),
  };
}

export interface WebhookRequest {
  url: string;
  /** Several during a Roll secret overlap: one v1 each. */
  secret: string | readonly string[];
  body: Buffer;
}

export interface AttemptResult {
  succeeded: boolean;
  /** null when no status line arrived: timeout, connection error, refused address. */
  httpStatus: number | null;
  /** null on success; otherwise a one-line reason that is safe to show the endpoint's owner. */
  error: string | null;
  /** The first RESPONSE_LOG_BYTES of the body as text, or null when there was no response. */
  responseBody: string | null;
  durationMs: number;
  attemptedAt: Date;
  /**
   * Where a refused receiver's host pointed: for the server log only, never stored in the
   * delivery log nor shown to the endpoint's owner (see RefusedAddressError).
   */
  refusedAddress?: { address: string; range: string };
  /** Why a host name did not resolve (ENOTFOUND, ETIMEOUT, ...): for the server log only, likewise. */
  dnsError?: string;
}

export interface WebhookSender {
  send(request: WebhookRequest): Promise<AttemptResult>;
  /** Closes the kept-alive connections. */
  close(): void;
}

/** Checks the address of every socket once connected: a second line behind the lookup filter. */
export class PublicOnlyAgent extends https.Agent {
  override createConnection(
    options: https.RequestOptions,
    callback?: (error: Error | null, stream: Duplex) => void,
  ): Duplex | null | undefined {
    const socket = super.createConnection(options, callback) as Socket | null | undefined;
    socket?.once('connect', () => {
      const remote = socket.remoteAddress ?? '';
      const range = nonPublicRange(remote);
      if (range) socket.destroy(new RefusedAddressError(String(options.host ?? remote), remote, range));
    });
    return socket;
  }
}

export function createWebhookSender(options: WebhookSenderOptions): WebhookSender {
  const maxTotalSockets = options.maxTotalSockets ?? MAX_TOTAL_SOCKETS;
  const agentOptions: https.AgentOptions = {
    keepAlive: true,
    // For a kept-alive agent, `timeout` closes *idle* sockets; a request in progress is
    // bounded by got's own timeout instead.
    timeout: options.idleSocketMs ?? IDLE_SOCKET_MS,
    maxTotalSockets,
    ...(options.ca !== undefined && { ca: options.ca }),
  };
  const resolver = createReceiverResolver({ servers: options.dnsServers });
  const agent = options.allowPrivateNetworks
    ? new https.Agent({ ...agentOptions, lookup: receiverLookup(resolver, true) })
    : new PublicOnlyAgent({ ...agentOptions, lookup: receiverLookup(resolver, false) });
  // got is loaded at the first send, not at start: an API or a CLI run that sends nothing (most
  // of them) never pays for one of a process's larger imports (docs/performance.md, "Test run").
  const httpClient = firstUse(() =>
    import('got').then(({ default: got }) =>
      got.extend({
        method: 'POST',
        agent: { https: agent },
        followRedirect: false,
        decompress: false,
        throwHttpErrors: false,
        retry: { limit: 0 },
        timeout: { request: options.timeoutMs },
        http2: false,
      }),
    ),
  );
  const userAgent = webhookUserAgent(options.baseUrl);

  return {
    async send(request) {
      // got's load (the first send of a process) comes before the attempt's time: the attempt
      // is timed from here, and its next one is scheduled from its end.
      const http = await httpClient();
      const attemptedAt = new Date();
      const resolving = performance.now();
      const unresolved = await resolveReceiver(resolver, request.url);
      if (unresolved) return { ...unresolved, durationMs: Math.round(performance.now() - resolving), attemptedAt };
      // The receiver's clock (the attempt's timeout, its duration) starts once its name is
      // resolved: waiting for our own resolver is never counted against it.
      const started = performance.now();
      makeRoom(agent, maxTotalSockets);
      const outcome = await attempt(http, request, userAgent, attemptedAt, options);
      return { ...outcome, durationMs: Math.round(performance.now() - started), attemptedAt };
    },
    close() {
      agent.destroy();
    },
  };
}

/**
 * Node's agent counts idle sockets against maxTotalSockets and, when full, queues a request
 * to another receiver until an idle one times out: seconds of that receiver's timeout spent
 * waiting on us. Close the oldest idle socket instead; the queued request gets its place as
 * soon as it is gone.
 */
function makeRoom(agent: https.Agent, maxTotalSockets: number): void {
  const count = (pool: NodeJS.ReadOnlyDict<unknown[]>) =>
    Object.values(pool).reduce((sum, sockets) => sum + (sockets?.length ?? 0), 0);
  if (count(agent.sockets) + count(agent.freeSockets) < maxTotalSockets) return;
  const idle = Object.values(agent.freeSockets).find((sockets) => sockets && sockets.length > 0);
  idle?.[0]?.destroy();
}

type Outcome = Omit<AttemptResult, 'durationMs' | 'attemptedAt'>;

function refusal(error: string): Outcome {
  return { succeeded: false, httpStatus: null, error, responseBody: null };
}

/**
 * Resolves the URL's host name into the resolver's cache before the request starts, where
 * the socket's lookup then finds it. Null when resolved (or nothing to resolve: a literal IP,
 * or a URL that attempt() refuses itself); otherwise the failed attempt.
 */
async function resolveReceiver(resolver: ReceiverResolver, target: string): Promise<Outcome | null> {
  let hostname: string;
  try {
    hostname = new URL(target).hostname.replace(/^\[(.*)\]$/, '$1');
  } catch {
    return null;
  }
  if (isIP(hostname)) return null;
  try {
    await resolver.resolve(hostname);
    return null;
  } catch (error) {
    const dnsError = (error as NodeJS.ErrnoException).code ?? 'ENOTFOUND';
    return { ...refusal(unresolvedHostMessage(hostname, dnsError)), dnsError };
  }
}

/** got wraps the error that the lookup or the socket raised: look inside. */
function refusedAddress(error: unknown): Pick<Outcome, 'refusedAddress'> {
  const refused = error instanceof RefusedAddressError ? error : (error as { cause?: unknown } | null)?.cause;
  return refused instanceof RefusedAddressError
    ? { refusedAddress: { address: refused.address, range: refused.range } }
    : {};
}

function attempt(
  client: Got,
  request: WebhookRequest,
  userAgent: string,
  attemptedAt: Date,
  options: WebhookSenderOptions,
): Promise<Outcome> {
  let url: URL;
  try {
    url = new URL(request.url);
  } catch {
    return Promise.resolve(refusal('the endpoint URL is not a valid URL'));
  }
  if (url.protocol !== 'https:') return Promise.resolve(refusal('the endpoint URL is not https://'));
  // A literal IP is connected to without a lookup, so it is checked here instead.
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  if (isIP(host)) {
    try {
      assertReceiverAddress(host, host, options.allowPrivateNetworks);
    } catch (error) {
      return Promise.resolve({ ...refusal((error as Error).message), ...refusedAddress(error) });
    }
  }

  const timestamp = Math.floor(attemptedAt.getTime() / 1000);
  const headers = {
    'content-type': 'application/json',
    'user-agent': userAgent,
    [SIGNATURE_HEADER.toLowerCase()]: signatureHeader(request.secret, timestamp, request.body),
  };

  return new Promise((resolve) => {
    let status: number | null = null;
    const chunks: Buffer[] = [];
    let received = 0;
    let settled = false;
    let stream: ReturnType<Got['stream']> | undefined;
    let bodyDeadline: NodeJS.Timeout | undefined;

    const settle = (error: unknown) => {
      if (settled) return;
      settled = true;
      clearTimeout(bodyDeadline);
      // The status line decides: an error while reading the body (a timeout, a reset) only
      // cuts the log short.
      if (status !== null) error = null;
      // Whatever is left of the body is never read: drop the connection rather than drain it.
      if (stream && !stream.readableEnded) stream.destroy();
      const body = status === null ? null : readableText(Buffer.concat(chunks).subarray(0, RESPONSE_LOG_BYTES));
      if (error) {
        resolve({
          succeeded: false,
          httpStatus: null,
          error: deliveryFailureText(error, options.timeoutMs, host),
          responseBody: body,
          ...refusedAddress(error),
        });
      } else if (status !== null && status >= 200 && status < 300) {
        resolve({ succeeded: true, httpStatus: status, error: null, responseBody: body });
      } else {
        const reason = status !== null && status >= 300 && status < 400 ? ': redirects are not followed' : '';
        resolve({ succeeded: false, httpStatus: status, error: `HTTP ${status}${reason}`, responseBody: body });
      }
    };

    try {
      stream = client.stream(url, { body: request.body, headers });
    } catch (error) {
      settle(error);
      return;
    }
    stream.on('response', (response: { statusCode: number }) => {
      status = response.statusCode;
      bodyDeadline = setTimeout(() => settle(null), RESPONSE_BODY_READ_MS);
    });
    stream.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      received += chunk.length;
      if (received >= RESPONSE_LOG_BYTES) settle(null);
    });
    stream.on('end', () => settle(null));
    stream.on('error', (error: Error) => settle(error));
  });
}

/** Postgres text cannot hold NUL; a body cut mid-character gets a replacement character. */
function readableText(bytes: Buffer): string {
  return bytes.toString('utf8').replaceAll('\u0000', '\uFFFD');
}

const DNS_CODES = new Set(['ENOTFOUND', 'EAI_AGAIN', 'ENODATA', 'ETIMEOUT', 'ESERVFAIL', 'EREFUSED', 'EBADRESP']);
const TLS_CODE = /^(ERR_TLS_|ERR_SSL_|CERT_|UNABLE_TO_|DEPTH_ZERO_|SELF_SIGNED_|HOSTNAME_MISMATCH)/;

/** One line for the delivery log: what went wrong, never the URL (it may hold a token). */
function deliveryFailureText(error: unknown, timeoutMs: number, host = 'the host'): string {
  const code = typeof error === 'object' && error !== null && 'code' in error ? String(error.code) : '';
  const message = error instanceof Error ? error.message : String(error);
  if (code === 'ERR_WEBHOOK_ADDRESS_REFUSED') return message;
  if (code === 'ETIMEDOUT') return `timed out after ${timeoutMs} ms`;
  if (code === 'ECONNREFUSED') return 'connection refused';
  if (code === 'ECONNRESET' || code === 'EPIPE') return 'connection reset by the receiver';
  if (DNS_CODES.has(code)) return unresolvedHostMessage(host, code);
  if (code === 'EHOSTUNREACH' || code === 'ENETUNREACH') return `host unreachable (${code})`;
  if (TLS_CODE.test(code)) return `TLS error (${code}): ${tlsProblem(code, message)}`;
  return `request failed${code ? ` (${code})` : ''}: ${truncate(message)}`;
}

/**
 * What is wrong with the receiver's TLS, in words its owner can act on. Node's own messages
 * are written for whoever runs Node ("if the root CA is installed locally, try running Node.js
 * with --use-system-ca"), advice an endpoint's owner cannot take: the usual certificate
 * problems are said here, any other is Node's message without such a hint.
 */
const NOT_PUBLIC = 'receivers need a certificate from a public certificate authority';
const TLS_PROBLEMS: Record<string, string> = {
  DEPTH_ZERO_SELF_SIGNED_CERT: `the receiver's certificate is self-signed; ${NOT_PUBLIC}`,
  SELF_SIGNED_CERT_IN_CHAIN: `the receiver's certificate chain ends in a self-signed certificate; ${NOT_PUBLIC}`,
  UNABLE_TO_GET_ISSUER_CERT: `the receiver's certificate is not from a trusted authority; ${NOT_PUBLIC}`,
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY: `the receiver's certificate is not from a trusted authority; ${NOT_PUBLIC}`,
  UNABLE_TO_VERIFY_LEAF_SIGNATURE:
    "the receiver's certificate could not be traced to a trusted authority: send its intermediate certificates with it, " +
    `or, if it is from a private authority, ${NOT_PUBLIC}`,
  CERT_HAS_EXPIRED: "the receiver's certificate has expired",
  CERT_NOT_YET_VALID: "the receiver's certificate is not valid yet",
  ERR_TLS_CERT_ALTNAME_INVALID: "the receiver's certificate is not for this host name",
};
const NODE_HINT = /;?\s*if the root CA is installed locally.*$/is;

function tlsProblem(code: string, message: string): string {
  return TLS_PROBLEMS[code] ?? truncate(message.replace(NODE_HINT, ''));
}

function truncate(text: string): string {
  return text.length > 300 ? `${text.slice(0, 300)}…` : text;
}
