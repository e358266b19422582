import type { RequestHandler, Response } from 'express';
import type { Static, TObject } from '@sinclair/typebox';
import { compileProblemFinder, invalidParam, isUuid, parseTimestamp } from '@retention/core';
import { Type } from '@sinclair/typebox';

/**
 * Validates the query string against the endpoint's schema (one per endpoint). Stricter than
 * Express's parser on purpose (decisions.md): an unknown parameter, a parameter given twice
 * and an empty value are all `invalid_param` naming the parameter, so a typo such as
 * `?stauts=lost` fails loudly instead of returning every row.
 */
export function validateQuery<T extends TObject>(schema: T): RequestHandler {
  const findProblem = compileProblemFinder(schema);
  const allowed = Object.keys(schema.properties);
  const allowedText = allowed.length ? `Allowed: ${allowed.join(', ')}.` : 'This endpoint takes none.';
  return (req, res, next) => {
    const search = req.originalUrl.includes('?') ? req.originalUrl.slice(req.originalUrl.indexOf('?') + 1) : '';
    const values: Record<string, string> = {};
    for (const [name, value] of strictQueryPairs(search)) {
      const shown = JSON.stringify(shorten(name, 40));
      if (!allowed.includes(name)) throw invalidParam(`Unknown query parameter ${shown}. ${allowedText}`);
      if (Object.hasOwn(values, name)) throw invalidParam(`Query parameter ${shown} is given more than once.`);
      if (value === '') throw invalidParam(`Query parameter ${shown} must not be empty.`);
      values[name] = value;
    }
    const problem = findProblem(values);
    if (problem) {
      // Worded as the refusals above are: `Query parameter "limit" must be …`.
      const what = problem.param === null ? 'The query string' : `Query parameter ${JSON.stringify(problem.param)}`;
      throw invalidParam(`${what} ${problem.reason}.${unencodedPlusHint(problem.param, values)}`);
    }
    res.locals.query = values;
    next();
  };
}

/**
 * The query string's name-value pairs, decoded as URLSearchParams does (`+` is a space, a
 * piece without `=` has an empty value, empty pieces are skipped) except that a malformed
 * percent-encoding (`%ZZ`, a lone `%`) or bytes that are not UTF-8 are refused naming the
 * parameter: URLSearchParams keeps the first as literal text and turns the second into U+FFFD,
 * so `?email=a%ZZ` searched for `a%ZZ` and a garbled tag for a word nobody sent.
 */
function* strictQueryPairs(search: string): Generator<[string, string]> {
  for (const piece of search.split('&')) {
    if (piece === '') continue;
    const equals = piece.indexOf('=');
    const rawName = equals === -1 ? piece : piece.slice(0, equals);
    const name = decodeQueryComponent(rawName);
    if (name === undefined) {
      throw invalidParam(
        `A query parameter name (${JSON.stringify(shorten(rawName, 40))}) is not valid percent-encoded UTF-8.`,
      );
    }
    const value = decodeQueryComponent(equals === -1 ? '' : piece.slice(equals + 1));
    if (value === undefined) {
      throw invalidParam(
        `Query parameter ${JSON.stringify(shorten(name, 40))} is not valid percent-encoded UTF-8: ` +
          "'%' must be followed by two hex digits, and the bytes must spell UTF-8 text.",
      );
    }
    yield [name, value];
  }
}

/** One component of a query string, or undefined when its encoding is malformed. */
function decodeQueryComponent(raw: string): string | undefined {
  try {
    // decodeURIComponent refuses both a bad escape and an invalid UTF-8 sequence (URIError).
    return decodeURIComponent(raw.replaceAll('+', ' '));
  } catch {
    return undefined;
  }
}

const shorten = (text: string, max: number) => (text.length > max ? `${text.slice(0, max)}…` : text);

/**
 * A query string decodes a bare `+` as a space, so a refused value holding a space most likely
 * had a `+` sent unencoded (`cursor=2026-03-07T10:15:02+01:00` typed into curl): say so.
 */
function unencodedPlusHint(refused: string | null, values: Record<string, string>): string {
  return refused !== null && values[refused]?.includes(' ')
    ? " A '+' in a query string reads as a space: send it percent-encoded, as %2B."
    : '';
}

export function queryOf<T extends TObject>(res: Response, _schema: T): Static<T> {
  return res.locals.query as Static<T>;
}

/** A path's `:id` (or another `:name` holding an id): a UUID (any case), or 400 invalid_param. */
export function pathId(value: unknown, name = 'id'): string {
  if (isUuid(value)) return value.toLowerCase();
  const text = String(value);
  const shown = text.length > 60 ? `${text.slice(0, 60)}…` : text;
  throw invalidParam(`Invalid ${name} ${JSON.stringify(shown)}: must be a UUID.`);
}

/** The query schema of endpoints that take no parameters. */
export const NoQuery = Type.Object({}, { additionalProperties: false });

/**
 * The `cursor` parameter of a list. Unlike `TimestampInput` it has no length cap of its own:
 * RFC 3339 allows any number of fraction digits, and Node's limit on the request line already
 * bounds the value.
 */
export const CursorParam = () =>
  Type.String({
    format: 'timestamp',
    description:
      'Rows strictly before this instant: a `next_cursor`, an RFC 3339 date-time, or a date meaning midnight UTC',
    errorMessage: 'must be an RFC 3339 timestamp such as 2026-03-07T09:15:02Z, or a date such as 2026-03-07',
  });

/** A validated `cursor` parameter as the instant it names. */
export function cursorOf(text: string | undefined): Date | undefined {
  return text === undefined ? undefined : new Date(parseTimestamp(text)!);
}
