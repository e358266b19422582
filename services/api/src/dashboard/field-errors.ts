import type { ErrorRequestHandler } from 'express';
import { ServiceError } from '@retention/core';

/**
 * The field an `invalid_param` message names: every such refusal is written `field: reason`
 * (`current_password: is not your current password`, `events[2]: must be …`, by the domain's
 * validators and by hand), and a refusal of the request as a whole has no such prefix ("The
 * request body is not valid JSON.", `(root): …`).
 */
const FIELD_PREFIX = /^([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*|\[\d+\])*): /;

function paramOf(message: string): string | null {
  return FIELD_PREFIX.exec(message)?.[1] ?? null;
}

/**
 * The dashboard API's `invalid_param` refusals carry the field they name as `param` (as
 * Stripe's errors do), so the page can show the refusal at that field; the message is
 * unchanged. Everything else goes on to the app's error handler.
 */
export const fieldErrors: ErrorRequestHandler = (error: unknown, _req, res, next) => {
  if (res.headersSent || !(error instanceof ServiceError) || error.type !== 'invalid_param') return next(error);
  const param = paramOf(error.message);
  if (!param) return next(error);
  res.status(error.status).json({ error: { type: error.type, message: error.message, param } });
};
