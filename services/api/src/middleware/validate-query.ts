import type { RequestHandler, Response } from 'express';
import type { Static, TObject } from '@sinclair/typebox';
import { compileValidator, invalidParam, isUuid, parseTimestamp } from '@retention/core';
import { Type } from '@sinclair/typebox';

/**
 * Validates the query string against the endpoint's schema (one per endpoint). Stricter than
 * Express's parser on purpose (decisions.md): an unknown parameter, a parameter given twice
 * and an empty value are all `invalid_param` naming the parameter, so a typo such as
 * `?stauts=lost` fails loudly instead of returning every row.
 */
export function validateQuery<T extends TObject>(schema: T): RequestHandler {
  const check = compileValidator(schema);
  const allowed = Object.keys(schema.properties);
  const allowedText = allowed.length ? `Allowed: ${allowed.join(', ')}.` : 'This endpoint takes none.';
  return (req, res, next) => {
    const search = req.originalUrl.includes('?') ? req.originalUrl.slice(req.originalUrl.indexOf('?') + 1) : '';
    const values: Record<string, string> = {};
    for (const [name, value] of new URLSearchParams(search)) {
      const shown = JSON.stringify(name.length > 40 ? `${name.slice(0, 40)}…` : name);
      if (!allowed.includes(name)) throw invalidParam(`Unknown query parameter ${shown}. ${allowedText}`);
      if (Object.hasOwn(values, name)) throw invalidParam(`Query parameter ${shown} is given more than once.`);
      if (value === '') throw invalidParam(`Query parameter ${shown} must not be empty.`);
      values[name] = value;
    }
    const problem = check(values);
    if (problem) throw invalidParam(`Invalid query parameter ${problem}`);
    res.locals.query = values;
    next();
  };
}

export function queryOf<T extends TObject>(res: Response, _schema: T): Static<T> {
  return res.locals.query as Static<T>;
}

/** The `:id` of a path: a UUID (any case), or 400 invalid_param. */
export function pathId(value: unknown): string {
  if (isUuid(value)) return value.toLowerCase();
  const text = String(value);
  const shown = text.length > 60 ? `${text.slice(0, 60)}…` : text;
  throw invalidParam(`Invalid id ${JSON.stringify(shown)}: must be a UUID.`);
}

/** The query schema of endpoints that take no parameters. */
export const NoQuery = Type.Object({}, { additionalProperties: false });

/** A validated `cursor` parameter as the instant it names. */
export function cursorOf(text: string | undefined): Date | undefined {
  return text === undefined ? undefined : new Date(parseTimestamp(text)!);
}
