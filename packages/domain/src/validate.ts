import { Type, type Static, type TSchema } from '@sinclair/typebox';
import {
  compileProblemFinder,
  invalidField,
  WITHOUT_CONTROL_CHARACTERS_BUT_TAB_AND_LINE_BREAKS,
  isUuid,
  MAX_AMOUNT_MINOR_UNITS,
  ServiceError,
} from '@retention/core';

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
 * What a one-line name may not hold, as the body of a regular expression class (Unicode
 * property escapes: Ajv compiles patterns with the `u` flag): controls (Cc: C0 and C1, DEL, tabs
 * and line breaks; Postgres refuses NUL), format characters (Cf: the bidi marks, embeddings,
 * overrides and isolates, which can show "Alice" for a name stored otherwise; the soft hyphen,
 * zero width space, word joiner, invisible operators, byte order mark, Mongolian vowel
 * separator, musical formatting and tag characters), the line and paragraph separators
 * (Zl, Zp) and every other character Unicode says is shown as nothing when a font has no glyph
 * for it (DI, Default_Ignorable_Code_Point: the Hangul fillers U+115F, U+1160, U+3164, U+FFA0,
 * which are letters to Unicode and so a name of them alone looked filled; the combining
 * grapheme joiner U+034F; the Khmer inherent vowels U+17B4, U+17B5). Listed by property, not by
 * hand, so a character nobody thought of is in.
 */
const INVISIBLE_OR_CONTROL = '\\p{Cc}\\p{Cf}\\p{Zl}\\p{Zp}\\p{DI}';
/**
 * The invisible characters that stay, between visible ones: ZWNJ and ZWJ (U+200C, U+200D),
 * which Persian, Indic scripts and emoji sequences need, and the variation selectors (U+180B-U+180D
 * and U+180F for Mongolian, U+FE00-U+FE0F, among them the emoji one, U+E0100-U+E01EF for
 * ideographs), which pick the glyph of the character before them.
 */
const JOINERS = '\\u200c\\u200d\\u180b-\\u180d\\u180f\\ufe00-\\ufe0f\\u{e0100}-\\u{e01ef}';

/**
 * A one-line name: something to see besides spaces, joiners and variation selectors, and no
 * invisible or control character but those.
 */
export const NAME_PATTERN = `^(?=.*[^\\s${JOINERS}])(?:[${JOINERS}]|[^${INVISIBLE_OR_CONTROL}])*$`;

/** Each character of a text that a name may not hold (the joiners stay). */
const INVISIBLE_IN_TEXT = new RegExp(`(?![${JOINERS}])[${INVISIBLE_OR_CONTROL}]`, 'gu');

/**
 * `text` with each character a name may not hold replaced by a space, for names we must take
 * as they come (a Stripe customer's, chosen by the customer): a space keeps apart the words a
 * line break or a tab separated, and an override or an invisible character no longer hides.
 */
export function withoutInvisibleCharacters(text: string): string {
  return text.replace(INVISIBLE_IN_TEXT, ' ');
}

export const NAME_CHARACTERS_RULE = 'without control characters or invisible formatting characters';

/** A one-line name given by a user or an operator (users, workspaces, API tokens, tags). */
export const NameInput = (maxLength: number) =>
  Type.String({
    minLength: 1,
    maxLength,
    pattern: NAME_PATTERN,
    errorMessage: `must be 1 to ${maxLength} characters, not all spaces, ${NAME_CHARACTERS_RULE}`,
  });

/**
 * `input` with its `name`, when it is a string, as a name is kept: without spaces at either end,
 * each run of two or more spaces inside one space (a name saved as "  Dana   Doe " read "Dana Doe" nowhere:
 * its avatar showed a space for an initial). Anything else is left for the validator to refuse.
 */
export function withTidyName<T>(input: T): T {
  if (typeof input !== 'object' || input === null || !('name' in input) || typeof input.name !== 'string') return input;
  // Spaces only (\p{Zs}): a tab or a line break is still refused as a control character.
  return { ...input, name: input.name.replace(/^\p{Zs}+|\p{Zs}+$/gu, '').replace(/\p{Zs}{2,}/gu, ' ') };
}

/** Free text typed by a customer: line breaks and tabs allowed, other control characters not. */
export const CustomerText = (maxLength: number) =>
  Type.String({
    minLength: 1,
    maxLength,
    pattern: WITHOUT_CONTROL_CHARACTERS_BUT_TAB_AND_LINE_BREAKS,
    errorMessage: `must be 1 to ${maxLength} characters without control characters other than line breaks and tabs`,
  });

/** Refuses an invalid Date and one in the future (beyond a minute of clock skew). */
export function assertPastDate(value: Date, field: string, now = Date.now()): Date {
  if (!(value instanceof Date) || Number.isNaN(value.getTime())) throw invalidField(field, 'must be a valid timestamp');
  if (value.getTime() > now + 60_000) throw invalidField(field, 'must not be in the future');
  return value;
}
