import { createServer, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { compileValidator, EVENT_DATA_SCHEMAS, eventDataKeys, isEventType, PING_EVENT_TYPE } from '@retention/core';
import { parseSignatureHeader, verifyWebhook } from '@retention/sdk';
import { eventually } from '@retention/testkit';
import type { TestCertificate } from './certificate.js';

/**
 * A real HTTPS webhook receiver for tests. Every request is checked the way a careful
 * receiver would: the signature with the SDK's verifier (what our users run) over the raw
 * bytes, the exact set of
 * headers on the wire, the body's keys and the `data` keys of its event type. Anything off
 * is recorded in the request's `problems`, which tests assert to be empty.
 */

export type Behaviour =
  | { kind: 'status'; status: number; body?: string; delayMs?: number; headers?: Record<string, string> }
  /** Never answers: the sender's timeout has to end it. */
  | { kind: 'hang' }
  /** Streams this many bytes of body with a 200, as fast as the sender reads. */
  | { kind: 'huge'; bytes: number }
  /** Sends the status line and the start of a body, then never finishes it, or drops the connection. */
  | { kind: 'unfinished'; status: number; body: string; then: 'hang' | 'reset' };

export interface ReceivedRequest {
  path: string;
  method: string;
  /** Header names exactly as they arrived, lowercased, in order. */
  headerNames: string[];
  headers: IncomingMessage['headers'];
  rawBody: Buffer;
  body: any;
  /** Date.now() when the request's body had fully arrived. */
  receivedAt: number;
  signatureTimestamp: number | null;
  problems: string[];
  /** Bytes of response the server managed to write before the client went away ('huge'). */
  bytesSent?: number;
}

export interface Route {
  secret: string;
  behaviour: Behaviour | ((request: ReceivedRequest, index: number) => Behaviour);
}

const EXPECTED_HEADERS = ['connection', 'content-length', 'content-type', 'host', 'user-agent', 'x-service-signature'];
const ISO_MILLIS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const dataValidators = new Map(
  Object.entries(EVENT_DATA_SCHEMAS).map(([type, schema]) => [type, compileValidator(schema, 'data')]),
);

export class Receiver {
  readonly requests: ReceivedRequest[] = [];
  private readonly routes = new Map<string, Route>();
  private readonly open = new Map<string, number>();
  private readonly maxInFlight = new Map<string, number>();
  private readonly sockets = new Set<Socket>();
  private server!: Server;
  port = 0;

  private constructor(private readonly userAgent: string) {}

  static async start(certificate: TestCertificate, baseUrl: string): Promise<Receiver> {
    const receiver = new Receiver(`Service-Webhooks/1 (+${baseUrl})`);
    receiver.server = createServer({ key: certificate.key, cert: certificate.cert }, (request, response) => {
      receiver.handle(request, response);
    });
    receiver.server.on('connection', (socket: Socket) => {
      receiver.sockets.add(socket);
      socket.on('close', () => receiver.sockets.delete(socket));
    });
    await new Promise<void>((resolve) => receiver.server.listen(0, '127.0.0.1', resolve));
    receiver.port = (receiver.server.address() as AddressInfo).port;
    return receiver;
  }

  /** The URL of a path on this receiver, by host name (so DNS resolution is involved). */
  url(path: string, host = 'localhost'): string {
    return `https://${host}:${this.port}${path}`;
  }

  route(path: string, route: Route): void {
    this.routes.set(path, route);
  }

  requestsTo(path: string): ReceivedRequest[] {
    return this.requests.filter((request) => request.path === path);
  }

  /** The requests open on a path right now. */
  inFlight(path: string): number {
    return this.open.get(path) ?? 0;
  }

  /** The most requests that were open at once on a path. */
  peakInFlight(path: string): number {
    return this.maxInFlight.get(path) ?? 0;
  }

  /** TCP connections open to the receiver right now, kept-alive idle ones included. */
  openConnections(): number {
    return this.sockets.size;
  }

  problems(): string[] {
    return this.requests.flatMap((request) => request.problems.map((problem) => `${request.path}: ${problem}`));
  }

  async waitForRequests(path: string, count: number, timeoutMs = 15_000): Promise<ReceivedRequest[]> {
    await eventually(() => this.requestsTo(path).length >= count, timeoutMs);
    return this.requestsTo(path);
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private handle(request: IncomingMessage, response: ServerResponse): void {
    const path = request.url ?? '';
    const chunks: Buffer[] = [];
    this.open.set(path, (this.open.get(path) ?? 0) + 1);
    this.maxInFlight.set(path, Math.max(this.maxInFlight.get(path) ?? 0, this.open.get(path)!));
    const done = () => this.open.set(path, this.open.get(path)! - 1);
    response.on('close', done);
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const rawBody = Buffer.concat(chunks);
      const route = this.routes.get(path);
      const received: ReceivedRequest = {
        path,
        method: request.method ?? '',
        headerNames: request.rawHeaders.filter((_value, index) => index % 2 === 0).map((name) => name.toLowerCase()),
        headers: request.headers,
        rawBody,
        body: undefined,
        receivedAt: Date.now(),
        signatureTimestamp: null,
        problems: [],
      };
      this.check(received, route);
      this.requests.push(received);
      if (!route) {
        response.writeHead(404).end();
        return;
      }
      const index = this.requestsTo(path).length - 1;
      const behaviour = typeof route.behaviour === 'function' ? route.behaviour(received, index) : route.behaviour;
      this.respond(behaviour, received, response);
    });
  }

  private respond(behaviour: Behaviour, received: ReceivedRequest, response: ServerResponse): void {
    if (behaviour.kind === 'hang') return;
    if (behaviour.kind === 'unfinished') {
      response.writeHead(behaviour.status, { 'content-type': 'text/plain', 'content-length': '100000' });
      response.write(behaviour.body, () => {
        if (behaviour.then === 'reset') setTimeout(() => response.socket?.destroy(), 50);
      });
      return;
    }
    if (behaviour.kind === 'huge') {
      response.writeHead(200, { 'content-type': 'text/plain' });
      const chunk = Buffer.alloc(64 * 1024, 'x');
      let written = 0;
      const pump = () => {
        while (written < behaviour.bytes && !response.destroyed) {
          written += chunk.length;
          if (!response.write(chunk)) return void response.once('drain', pump);
        }
        response.end();
      };
      response.on('close', () => {
        received.bytesSent = response.socket?.bytesWritten ?? written;
      });
      pump();
      return;
    }
    const send = () => {
      if (response.destroyed) return;
      response.writeHead(behaviour.status, behaviour.headers);
      response.end(behaviour.body ?? '');
    };
    if (behaviour.delayMs) setTimeout(send, behaviour.delayMs);
    else send();
  }

  private check(received: ReceivedRequest, route: Route | undefined): void {
    const problems = received.problems;
    if (!route) problems.push('no route for this path');
    if (received.method !== 'POST') problems.push(`method ${received.method}`);
    const names = [...received.headerNames].sort();
    if (JSON.stringify(names) !== JSON.stringify(EXPECTED_HEADERS)) {
      problems.push(`header set ${JSON.stringify(names)}`);
    }
    if (received.headers['content-type'] !== 'application/json') {
      problems.push(`content-type ${received.headers['content-type']}`);
    }
    if (received.headers['user-agent'] !== this.userAgent)
      problems.push(`user-agent ${received.headers['user-agent']}`);
    if (Number(received.headers['content-length']) !== received.rawBody.length)
      problems.push('content-length mismatch');
    if (route) {
      try {
        const header = received.headers['x-service-signature'];
        verifyWebhook(received.rawBody, header, route.secret);
        received.signatureTimestamp = parseSignatureHeader(header).timestamp;
      } catch (error) {
        problems.push(`signature: ${(error as Error).message}`);
      }
    }
    try {
      received.body = JSON.parse(received.rawBody.toString('utf8'));
    } catch {
      problems.push('body is not JSON');
      return;
    }
    const body = received.body;
    if (JSON.stringify(Object.keys(body)) !== JSON.stringify(['type', 'created_at', 'data'])) {
      problems.push(`body keys ${JSON.stringify(Object.keys(body))}`);
    }
    if (typeof body.created_at !== 'string' || !ISO_MILLIS.test(body.created_at)) {
      problems.push(`created_at ${body.created_at}`);
    }
    if (body.type === PING_EVENT_TYPE) {
      if (JSON.stringify(body.data) !== '{"test":true}') problems.push(`ping data ${JSON.stringify(body.data)}`);
    } else if (isEventType(body.type)) {
      const problem = dataValidators.get(body.type)!(body.data);
      if (problem) problems.push(problem);
      const allowed = eventDataKeys(body.type);
      for (const key of Object.keys(body.data ?? {})) {
        if (!allowed.includes(key)) problems.push(`data key ${key} is not in spec 6.2 for ${body.type}`);
      }
    } else {
      problems.push(`unknown type ${body.type}`);
    }
  }
}
