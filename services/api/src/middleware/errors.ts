import type { ErrorRequestHandler, RequestHandler } from 'express';
import { errorBody, ServiceError, type ErrorBody } from '@retention/core';
import { isConnectionError } from '@retention/db';
import type { Logger } from '@retention/runtime';
import { loggablePath } from './request-log.js';

/** Anything no route answered: a JSON 404, never Express's HTML page. */
export const unknownRoute: RequestHandler = (req, res) => {
  res.status(404).json(
    errorBody(
      'not_found',
      // baseUrl: under a router mounted at /api/v1, `path` alone would drop the prefix.
      `Unrecognized request URL (${req.method} ${req.baseUrl}${req.path}). Every endpoint of this API is a GET under /api/v1.`,
    ),
  );
};

/**
 * Every endpoint is a GET (HEAD comes with it). Any other method, OPTIONS included, is answered
 * like an unknown route: without this, Express answers OPTIONS on a known path itself, in
 * plain text ("GET, HEAD"), outside the API's JSON error shape.
 */
export const readMethodsOnly: RequestHandler = (req, res, next) => {
  if (req.method === 'GET' || req.method === 'HEAD') next();
  else unknownRoute(req, res, next);
};

/**
 * The last middleware: every failure becomes `{ error: { type, message } }`. Client mistakes
 * keep their type; anything unexpected is a 500 `database_error` (the API's only server-side
 * type) whose message asks the client to retry. Stack traces go to the log, with the request
 * id, and never to the client.
 */
export function errorHandler(logger: Logger): ErrorRequestHandler {
  return (error: unknown, req, res, next) => {
    if (res.headersSent) return next(error);
    if (error instanceof ServiceError && error.retryAfterSeconds !== undefined) {
      res.setHeader('Retry-After', String(error.retryAfterSeconds));
    }
    const { status, body } = errorReply(error, logger, {
      requestId: res.locals.requestId as string | undefined,
      method: req.method,
      path: loggablePath(req.originalUrl),
    });
    res.status(status).json(body);
  };
}

/**
 * The status and body of a failure, logging what is unexpected; shared with the Stripe
 * receiver served before Express (processor/stripe-before-express.ts).
 */
export function errorReply(
  error: unknown,
  logger: Logger,
  request: { requestId: string | undefined; method: string; path: string },
): { status: number; body: ErrorBody } {
  if (error instanceof ServiceError) return { status: error.status, body: error.toBody() };
  // Express's own client errors: a malformed percent-encoding in the path, and the like.
  const status = typeof error === 'object' && error !== null && 'status' in error ? Number(error.status) : 500;
  if (status >= 400 && status < 500) {
    return { status: 400, body: errorBody('invalid_param', 'The request URL is malformed.') };
  }
  const unavailable = isConnectionError(error);
  logger.error({ err: error, ...request }, unavailable ? 'database unavailable' : 'request failed');
  return {
    status: 500,
    body: errorBody(
      'database_error',
      unavailable
        ? 'The database is temporarily unavailable. Retry the request shortly.'
        : 'The server failed to complete the request. Retry the request shortly.',
    ),
  };
}
