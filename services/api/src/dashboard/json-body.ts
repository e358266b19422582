import express, { type RequestHandler } from 'express';
import { invalidField, invalidParam, ServiceError } from '@retention/core';

/** Bodies are small JSON objects; anything past this is refused before it is read whole. */
const MAX_BODY_BYTES = 64 * 1024;

const parse = express.json({ limit: MAX_BODY_BYTES, strict: true, type: () => true });

/**
 * JSON bodies for the dashboard API: `application/json` only, at most 64 KB (413
 * `payload_too_large`), an object. A request without a body reads as `{}`.
 */
export const jsonBody: RequestHandler = (req, res, next) => {
  const length = Number(req.headers['content-length'] ?? 0);
  const hasBody = length > 0 || req.headers['transfer-encoding'] !== undefined;
  if (!hasBody) {
    req.body = {};
    return next();
  }
  if (!req.is('application/json')) return next(invalidParam('The request body must be application/json.'));
  parse(req, res, (error?: unknown) => {
    if (error) {
      const type = (error as { type?: string }).type;
      if (type === 'entity.too.large') {
        return next(new ServiceError('payload_too_large', `The request body is over ${MAX_BODY_BYTES / 1024} KB.`));
      }
      return next(invalidParam('The request body is not valid JSON.'));
    }
    if (typeof req.body !== 'object' || req.body === null || Array.isArray(req.body)) {
      return next(invalidParam('The request body must be a JSON object.'));
    }
    next();
  });
};

/** The body's fields, refusing any key the route does not take (`invalid_param` naming it). */
export function bodyOf<K extends string>(body: unknown, allowed: readonly K[]): Partial<Record<K, unknown>> {
  const object = (body ?? {}) as Record<string, unknown>;
  for (const key of Object.keys(object)) {
    if (!(allowed as readonly string[]).includes(key)) throw invalidField(key, 'is not a field of this request');
  }
  return object as Partial<Record<K, unknown>>;
}
