import express, { type RequestHandler } from 'express';
import { invalidField, invalidParam, ServiceError } from '@retention/core';

/** Bodies are small JSON objects; anything past this is refused before it is read whole. */
const MAX_BODY_BYTES = 64 * 1024;

const parse = express.json({ limit: MAX_BODY_BYTES, strict: true, type: () => true });

/**
 * A body that was sent but cannot be read (not `application/json`, not JSON, not an object),
 * held in `req.body` with its refusal. The refusal is made once the request is authorized, not
 * when the body is read: someone whose role may not use a route is told so (403), whatever they
 * sent, and someone with no session is asked to sign in (401). It is made by the role check
 * (`allow`, context.ts) once the role passes, and by `bodyOf` when a route reads its body.
 */
class UnreadableBody {
  constructor(readonly refusal: ServiceError) {}
}

const unreadable = (message: string) => new UnreadableBody(invalidParam(message));

/**
 * JSON bodies for the dashboard API: `application/json` only, at most 64 KB, an object. A
 * request without a body reads as `{}`. The size is capped here, before anything else (413
 * `payload_too_large`, nothing read past the cap); a body that cannot be read is refused later
 * (UnreadableBody).
 */
export const jsonBody: RequestHandler = (req, res, next) => {
  const length = Number(req.headers['content-length'] ?? 0);
  const hasBody = length > 0 || req.headers['transfer-encoding'] !== undefined;
  if (!hasBody) {
    req.body = {};
    return next();
  }
  // Not read at all: nothing of it is kept, and Node discards it once the answer is sent.
  if (!req.is('application/json')) {
    req.body = unreadable('The request body must be application/json.');
    return next();
  }
  parse(req, res, (error?: unknown) => {
    if (error) {
      const type = (error as { type?: string }).type;
      if (type === 'entity.too.large') {
        return next(new ServiceError('payload_too_large', `The request body is over ${MAX_BODY_BYTES / 1024} KB.`));
      }
      req.body = unreadable('The request body is not valid JSON.');
    } else if (typeof req.body !== 'object' || req.body === null || Array.isArray(req.body)) {
      req.body = unreadable('The request body must be a JSON object.');
    } else if (!wellFormed(req.body)) {
      req.body = unreadable(
        'The request body has text that is not valid Unicode (a lone surrogate escape such as \\ud800).',
      );
    }
    next();
  });
};

// With the `u` flag a pair is one code point: only a surrogate standing alone is in category Cs.
const LONE_SURROGATE = /\p{Cs}/u;

/**
 * Whether every string of a parsed body, keys included, is well-formed UTF-16. JSON's `\ud800`
 * escape makes a lone surrogate, which no text encoding can carry: Postgres refuses it in a jsonb
 * (a 500, where a security log entry copies the field) and stores U+FFFD in a text column (a
 * name saved other than it was checked). So it is refused at the door, for every route alike.
 */
function wellFormed(body: unknown): boolean {
  // A loop over an explicit stack, not recursion: a body nested thousands deep fits in 64 KB,
  // and a recursive walk ran out of call stack inside body-parser's callback, where no handler
  // catches it, and took the process down.
  const pending: unknown[] = [body];
  while (pending.length > 0) {
    const value = pending.pop();
    if (typeof value === 'string') {
      if (LONE_SURROGATE.test(value)) return false;
    } else if (Array.isArray(value)) {
      for (const item of value) pending.push(item);
    } else if (typeof value === 'object' && value !== null) {
      for (const [key, field] of Object.entries(value)) {
        if (LONE_SURROGATE.test(key)) return false;
        pending.push(field);
      }
    }
  }
  return true;
}

/**
 * Refuses a body jsonBody could not read (400 `invalid_param`), once the request is authorized:
 * the role check, `bodyOf`, and the routes that take no body and check no role but change
 * something (signing out), which refused it before and still do.
 */
export function assertReadableBody(body: unknown): void {
  if (body instanceof UnreadableBody) throw body.refusal;
}

/** The body's fields, refusing any key the route does not take (`invalid_param` naming it). */
export function bodyOf<K extends string>(body: unknown, allowed: readonly K[]): Partial<Record<K, unknown>> {
  assertReadableBody(body);
  const object = (body ?? {}) as Record<string, unknown>;
  for (const key of Object.keys(object)) {
    if (!(allowed as readonly string[]).includes(key)) throw invalidField(key, 'is not a field of this request');
  }
  return object as Partial<Record<K, unknown>>;
}
