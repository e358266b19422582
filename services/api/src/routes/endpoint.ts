import type { Request, Response, Router } from 'express';
import type { Static, TObject, TSchema } from '@sinclair/typebox';
import type { ErrorType } from '@retention/core';
import { JsonText } from '@retention/db';
import { callerOf, type Caller } from '../middleware/authenticate.js';
import { pathId, queryOf, validateQuery } from '../middleware/validate-query.js';

/**
 * The contract of one API endpoint: its path, the schema that validates its query string,
 * the schema of its response and the errors it answers. The router serves it and the
 * OpenAPI document describes it from this one object, so the two cannot disagree.
 */
export interface Endpoint<Q extends TObject = TObject, R extends TSchema = TSchema, P extends string = string> {
  operationId: string;
  /** Express path under API_PREFIX; `:name` segments are path parameters. */
  path: string;
  tag: string;
  summary: string;
  description: string;
  query: Q;
  /** The schema of each `:name` segment of `path` (UUIDs: `serve` checks them). */
  params?: Record<P, TSchema>;
  /** What a 200 carries, in words. */
  returns: string;
  /** The 200 response body; its `$id` (required) names it in the OpenAPI document. */
  response: R;
  /** Errors this endpoint answers besides COMMON_ERRORS. */
  errors?: readonly ErrorType[];
}

/**
 * Errors every endpoint can answer: authentication and the rate limit run first, every
 * endpoint validates its query string (unknown parameters included), and any of them can
 * meet a server-side failure.
 */
const COMMON_ERRORS = [
  'authentication_required',
  'invalid_token',
  'invalid_param',
  'rate_limit_exceeded',
  'database_error',
] as const satisfies readonly ErrorType[];

export function errorsOf(endpoint: Endpoint): ErrorType[] {
  return [...COMMON_ERRORS, ...(endpoint.errors ?? [])];
}

export interface EndpointCall<Q extends TObject, P extends string> {
  req: Request;
  query: Static<Q>;
  /** The path's parameters, checked against `params` (a UUID comes lowercased). */
  params: Record<P, string>;
  caller: Caller;
}

/**
 * Serves `endpoint` on `router`: validates the query string and the path's parameters, hands
 * them typed to the handler, then answers the handler's value as JSON: JSON text that Postgres
 * built is written as it is, anything else (typed as the endpoint's response) is serialised.
 */
export function serve<Q extends TObject, R extends TSchema, P extends string = never>(
  router: Router,
  endpoint: Endpoint<Q, R, P>,
  handler: (call: EndpointCall<Q, P>) => Promise<Static<R> | JsonText<Static<R>>>,
): void {
  const paramNames = Object.keys(endpoint.params ?? {}) as P[];
  for (const name of paramNames) {
    // Every path parameter of the API is an id; another kind would need its own check here.
    if ((endpoint.params![name] as { format?: string }).format !== 'uuid') {
      throw new Error(`${endpoint.operationId}: path parameter ${name} must be a UUID schema`);
    }
  }
  router.get(endpoint.path, validateQuery(endpoint.query), async (req: Request, res: Response) => {
    const params = Object.fromEntries(paramNames.map((name) => [name, pathId(req.params[name], name)])) as Record<
      P,
      string
    >;
    const body = await handler({ req, query: queryOf(res, endpoint.query), params, caller: callerOf(res) });
    // JSON text goes out as it is: express's res.send would parse the content type, look up
    // its charset and copy the body into a Buffer first (about 10 µs of a list request's CPU).
    // Node sets Content-Length from the one chunk, and sends no body to a HEAD.
    res.setHeader('Content-Type', 'application/json; charset=utf-8');
    res.end(body instanceof JsonText ? body.text : JSON.stringify(body));
  });
}
