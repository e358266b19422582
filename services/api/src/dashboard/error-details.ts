import type { ErrorRequestHandler } from 'express';
import { ServiceError } from '@retention/core';

/**
 * The dashboard API's `invalid_param` refusals carry the field they are about as `param` (as
 * Stripe's errors do), so the page can show the refusal at that field. The field is the one the
 * refusal was made with (ServiceError.param, set by invalidField and the schema validators),
 * never read back out of the message; the message is unchanged (`field: reason`), still whole
 * where a page shows it on its own. A refusal of the request as a whole has no field, and like
 * everything else goes on to the app's error handler, which answers `/api/v1`'s
 * `{ error: { type, message } }`. A refusal with a finer reason than its type (ServiceError.code:
 * `member_removed`) carries it as `code` the same way, and one about an object as it is now
 * (ServiceError.objects: `endpoint` with `endpoint_changed`) carries each under its name.
 */
export const errorDetails: ErrorRequestHandler = (error: unknown, _req, res, next) => {
  if (res.headersSent || !(error instanceof ServiceError)) return next(error);
  if (error.param === undefined && error.code === undefined && error.objects === undefined) return next(error);
  res.status(error.status).json({
    error: {
      ...error.objects,
      type: error.type,
      message: error.message,
      ...(error.param !== undefined && { param: error.param }),
      ...(error.code !== undefined && { code: error.code }),
    },
  });
};
