import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { compileProblemFinder, invalidField, isUuid, MAX_AMOUNT_MINOR_UNITS, ServiceError } from '@retention/core';

/**
 * Compiles a schema for validating the input of a domain action. The returned function
 * throws `invalid_param` naming the offending field, or returns the value typed.
 * `root` names the value itself when it is not an object of named fields.
 */
export function inputValidator<T extends TSchema>(schema: T, root = ''): (value: unknown) => Static<T> {
  const findProblem = compileProblemFinder(schema, root);
  return (value) => {
    const problem = findProblem(value);
    if (problem) {
      throw new ServiceError('invalid_param', problem.message, { ...(problem.param && { param: problem.param }) });
    }
    return value;
  };
}

/** Ids reach the domain from operators and scripts: a non-UUID is their mistake, not a 500. */
export function assertUuid(value: string, field = 'id'): string {
  if (!isUuid(value)) throw invalidField(field, 'must be a UUID');
  return value;
}

/** Schema builders for action inputs: each carries the message an operator should read. */
export const IdInput = () =>
  Type.String({ pattern: '^[0-9a-fA-F]{8}-([0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}$', errorMessage: 'must be a UUID' });

export const CurrencyInput = () =>
  Type.String({ pattern: '^[a-z]{3}$', errorMessage: 'must be a three-letter lowercase currency code such as usd' });

/** An integer amount in minor units (cents, or whole yen for jpy), at most MAX_AMOUNT_MINOR_UNITS. */
export const AmountInput = (minimum: number) =>
  Type.Integer({
    minimum,
    maximum: MAX_AMOUNT_MINOR_UNITS,
    errorMessage: `must be an integer amount in minor units from ${minimum} to ${MAX_AMOUNT_MINOR_UNITS}`,
  });

/**
 * What a one-line name may not hold: C0 and C1 controls and DEL (Postgres refuses NUL), and the
 * invisible format characters that can make a name read as another: the bidi marks,
 * embeddings, overrides and isolates (U+061C, U+200E, U+200F, U+202A-U+202E, U+2066-U+2069),
 * which can show "Alice" for a name stored otherwise; the line and paragraph separators
 * (U+2028, U+2029); the soft hyphen, zero width space, word joiner and invisible operators
 * (U+00AD, U+200B, U+2060-U+2064); the deprecated format controls (U+206A-U+206F); the byte
 * order mark (U+FEFF) and the interlinear annotation marks (U+FFF9-U+FFFB). ZWNJ and ZWJ
 * (U+200C, U+200D) stay: Persian, Indic scripts and emoji sequences need them.
 */
const NOT_IN_NAMES =
  '\\u0000-\\u001f\\u007f-\\u009f\\u00ad\\u061c\\u200b\\u200e\\u200f\\u2028-\\u202e\\u2060-\\u2064\\u2066-\\u206f\\ufeff\\ufff9-\\ufffb';

/** A one-line name: something to see besides spaces and joiners, and nothing of NOT_IN_NAMES. */
export const NAME_PATTERN = `^(?=.*[^\\s\\u200c\\u200d])[^${NOT_IN_NAMES}]*$`;
export const NAME_CHARACTERS_RULE = 'without control characters or invisible formatting characters';

/** A one-line name given by a user or an operator (users, workspaces, API tokens, tags). */
export const NameInput = (maxLength: number) =>
  Type.String({
    minLength: 1,
    maxLength,
    pattern: NAME_PATTERN,
    errorMessage: `must be 1 to ${maxLength} characters, not all spaces, ${NAME_CHARACTERS_RULE}`,
  });

/** Free text typed by a customer: line breaks and tabs allowed, other control characters not. */
export const CustomerText = (maxLength: number) =>
  Type.String({
    minLength: 1,
    maxLength,
    pattern: '^[^\\u0000-\\u0008\\u000b\\u000c\\u000e-\\u001f\\u007f]*$',
    errorMessage: `must be 1 to ${maxLength} characters without control characters other than line breaks and tabs`,
  });

/** Refuses an invalid Date and one in the future (beyond a minute of clock skew). */
export function assertPastDate(value: Date, field: string, now = Date.now()): Date {
  if (!(value instanceof Date) || Number.isNaN(value.getTime())) throw invalidField(field, 'must be a valid timestamp');
  if (value.getTime() > now + 60_000) throw invalidField(field, 'must not be in the future');
  return value;
}
