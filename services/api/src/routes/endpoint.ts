import type { Request, Response, Router } from 'express';
import type { Static, TObject, TSchema } from '@sinclair/typebox';
import type { ErrorType } from '@retention/core';
import { JsonText } from '@retention/db';
import { callerOf, type Caller } from '../middleware/authenticate.js';
import { queryOf, validateQuery } from '../middleware/validate-query.js';

/**
 * The contract of one API endpoint: its path, the schema that validates its query string,
 * the schema of its response and the errors it answers. The router serves it and the
 * OpenAPI document describes it from this one object, so the two cannot disagree.
 */
export interface Endpoint<Q extends TObject = TObject> {
  operationId: string;
  /** Express path under API_PREFIX; `:name` segments are path parameters. */
  path: string;
  tag: string;
  summary: string;
  description: string;
  query: Q;
  /** The schema of each `:name` segment of `path`. */
  params?: Record<string, TSchema>;
  /** What a 200 carries, in words. */
  returns: string;
  /** The 200 response body; its `$id` (required) names it in the OpenAPI document. */
  response: TSchema;
  /** Errors this endpoint answers besides COMMON_ERRORS. */
  errors?: readonly ErrorType[];
}

/**
 * Errors every endpoint can answer: authentication and the rate limit run first, every
 * endpoint validates its query string (unknown parameters included), and any of them can
 * meet a server-side failure.
 */
export const COMMON_ERRORS = [
  'authentication_required',
  'invalid_token',
  'invalid_param',
  'rate_limit_exceeded',
  'database_error',
] as const satisfies readonly ErrorType[];

export function errorsOf(endpoint: Endpoint): ErrorType[] {
  return [...COMMON_ERRORS, ...(endpoint.errors ?? [])];
}

export interface EndpointCall<Q extends TObject> {
  req: Request;
  query: Static<Q>;
  caller: Caller;
}

/**
 * Serves `endpoint` on `router`: validates the query string, then answers the handler's value
 * as JSON: JSON text that Postgres built is written as it is, anything else is serialised.
 */
export function serve<Q extends TObject>(
  router: Router,
  endpoint: Endpoint<Q>,
  handler: (call: EndpointCall<Q>) => Promise<unknown>,
): void {
  router.get(endpoint.path, validateQuery(endpoint.query), async (req: Request, res: Response) => {
    const body = await handler({ req, query: queryOf(res, endpoint.query), caller: callerOf(res) });
    // JSON text goes out as it is: express's res.send would parse the content type, look up
    // its charset and copy the body into a Buffer first (about 10 µs of a list request's CPU).
    // Node sets Content-Length from the one chunk, and sends no body to a HEAD.
    res.setHeader('Content-Type', 'application/json; charset=utf-8');
    res.end(body instanceof JsonText ? body.text : JSON.stringify(body));
  });
}
