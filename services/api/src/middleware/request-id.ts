import { randomUUID } from 'node:crypto';
import type { RequestHandler } from 'express';

const INCOMING_ID = /^[A-Za-z0-9._:-]{8,128}$/;

/**
 * Every response carries `Request-Id`, and every log line about the request the same id.
 * A well-formed id sent by a proxy in front of the API is kept, so traces join up.
 */
export const requestId: RequestHandler = (req, res, next) => {
  const id = chooseRequestId(req.get('request-id') ?? req.get('x-request-id'));
  res.locals.requestId = id;
  res.setHeader('Request-Id', id);
  next();
};

/**
 * The request's id: the one the client (a proxy) sent in `Request-Id`, else `X-Request-Id`,
 * when well formed; else a fresh one. Shared with the Stripe receiver served before Express.
 */
export function chooseRequestId(incoming: string | undefined): string {
  return incoming && INCOMING_ID.test(incoming) ? incoming : newRequestId();
}

/** A fresh id: `req_` and 32 hex digits. */
export function newRequestId(): string {
  return `req_${randomUUID().replaceAll('-', '')}`;
}
