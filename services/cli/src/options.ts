import {
  compileValidator,
  Email,
  invalidParam,
  isOneOf,
  isUuid,
  isValidFxRate,
  parseDuration,
  parseTimestamp,
  CURRENCY_PATTERN,
  EVENT_TYPES,
  isEventType,
  MAX_AMOUNT_MINOR_UNITS,
  type EventType,
  CONTROL_CHARACTER,
  CONTROL_CHARACTER_BUT_TAB_AND_LINE_BREAKS,
} from '@retention/core';

/**
 * Option parsers: each turns the raw text of `--name value` into a typed value or throws
 * `invalid_param` naming the option. Structural problems (unknown or missing options) are
 * usage errors, raised by the command runner instead.
 */

export interface OptionSpec<T> {
  /** A flag takes no value (`--processor` of `campaign lose`). */
  flag?: boolean;
  required?: boolean;
  placeholder: string;
  parse: (raw: string, option: string) => T;
}

type Parser<T> = (raw: string, option: string) => T;

function option<T>(placeholder: string, parse: Parser<T>) {
  return {
    required: (): OptionSpec<T> & { required: true } => ({ placeholder, parse, required: true }),
    optional: (): OptionSpec<T> & { required?: false } => ({ placeholder, parse }),
  };
}

/** Free text; only `multiline` text (customer feedback) may hold line breaks and tabs. */
export const text = (placeholder = 'TEXT', maxLength = 5000, { multiline = false } = {}) =>
  option(placeholder, (raw, name) => {
    if (raw.trim().length === 0) throw invalidParam(`--${name} must not be empty`);
    if (raw.length > maxLength) throw invalidParam(`--${name} must be at most ${maxLength} characters`);
    if ((multiline ? CONTROL_CHARACTER_BUT_TAB_AND_LINE_BREAKS : CONTROL_CHARACTER).test(raw)) {
      const allowed = multiline ? ' other than line breaks and tabs' : '';
      throw invalidParam(`--${name} must not contain control characters${allowed}`);
    }
    return raw;
  });

const checkEmail = compileValidator(Email());

export const email = () =>
  option('E', (raw, name) => {
    if (checkEmail(raw) !== null)
      throw invalidParam(`--${name} must be an email address such as ann@example.com, got "${truncate(raw)}"`);
    return raw;
  });

/**
 * Units of a currency per US dollar, as a plain decimal (no exponent), kept as text to stay exact.
 */
export const fxRate = () =>
  option('RATE', (raw, name) => {
    if (!isValidFxRate(raw)) {
      throw invalidParam(
        `--${name} must be a positive decimal number such as 0.92 or 150 (up to 12 digits on each side of the point), got "${truncate(raw)}"`,
      );
    }
    return raw;
  });

export const uuid = (placeholder = 'ID') =>
  option(placeholder, (raw, name) => {
    if (!isUuid(raw)) throw invalidParam(`--${name} must be a UUID, got "${truncate(raw)}"`);
    return raw.toLowerCase();
  });

export const integer = (placeholder: string, min: number, max = Number.MAX_SAFE_INTEGER) =>
  option(placeholder, (raw, name) => {
    if (!/^-?\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
      throw invalidParam(`--${name} must be an integer between ${min} and ${max}, got "${truncate(raw)}"`);
    }
    return Number(raw);
  });

/**
 * An amount in minor units (cents, whole yen), capped so that stats can add many of them exactly.
 */
export const amount = (minimum: number) =>
  option('CENTS', (raw, name) => {
    if (!/^-?\d+$/.test(raw) || Number(raw) < minimum || Number(raw) > MAX_AMOUNT_MINOR_UNITS) {
      throw invalidParam(
        `--${name} must be an integer amount in minor units (cents) from ${minimum} to ${MAX_AMOUNT_MINOR_UNITS}, got "${truncate(raw)}"`,
      );
    }
    return Number(raw);
  });

export const oneOf = <T extends string>(values: readonly T[], placeholder = values.join('|')) =>
  option(placeholder, (raw, name) => {
    if (!isOneOf(values, raw))
      throw invalidParam(`--${name} must be one of ${values.join(', ')}, got "${truncate(raw)}"`);
    return raw;
  });

/** Three letters, accepted in either case and stored lowercase. */
export const currency = () =>
  option('CUR', (raw, name) => {
    const lower = raw.toLowerCase();
    if (!CURRENCY_PATTERN.test(lower))
      throw invalidParam(`--${name} must be a three-letter currency code, got "${truncate(raw)}"`);
    return lower;
  });

/**
 * A moment that has passed: the domain refuses the future too, but would name its field, not the
 * option.
 */
export const pastTimestamp = () =>
  option('ISO', (raw, name) => {
    const millis = parseTimestamp(raw);
    if (millis === null)
      throw invalidParam(
        `--${name} must be an ISO 8601 timestamp such as 2026-03-07T09:15:02Z, got "${truncate(raw)}"`,
      );
    // The domain's allowance for clock skew, one minute.
    if (millis > Date.now() + 60_000) throw invalidParam(`--${name} must not be in the future, got "${truncate(raw)}"`);
    return new Date(millis);
  });

export const flag = (): OptionSpec<boolean> & { flag: true } => ({ flag: true, placeholder: '', parse: () => true });

function truncate(raw: string): string {
  return raw.length > 60 ? `${raw.slice(0, 60)}…` : raw;
}

/** `all` (every event type: an empty subscription) or a comma list of event types. */
export const eventTypes = () =>
  option('t1,t2|all', (raw, name): EventType[] => {
    if (raw.trim() === 'all') return [];
    const items = raw.split(',').map((item) => item.trim());
    if (items.some((item) => item.length === 0))
      throw invalidParam(`--${name} must be a comma-separated list with no empty items`);
    const unknown = items.find((item) => !isEventType(item));
    if (unknown !== undefined) {
      throw invalidParam(
        `--${name}: "${truncate(unknown)}" is not an event type; use all, or some of ${EVENT_TYPES.join(', ')}`,
      );
    }
    return items as EventType[];
  });

/** A duration such as 30m or 24h, in whole seconds, at most `maxSeconds`. */
export const durationSeconds = (maxSeconds: number) =>
  option('DURATION', (raw, name) => {
    const millis = parseDuration(raw);
    if (millis === null || millis < 0 || millis > maxSeconds * 1000)
      throw invalidParam(`--${name} must be a duration such as 30m or 24h, at most ${maxSeconds / 3600} h`);
    return Math.round(millis / 1000);
  });
