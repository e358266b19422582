/**
 * Timestamps: everything the service emits is UTC ISO 8601 with milliseconds, and every
 * timestamp it accepts (cursors, CLI options, fixture files) is parsed strictly here.
 */

// Linear to match (no nested or overlapping repetition), so a value of any length is safe.
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(?:([Zz])|([+-])(\d{2}):(\d{2}))$/;
const DATE_ONLY = /^(\d{4})-(\d{2})-(\d{2})$/;

/**
 * What `parseTimestamp` accepts, as one JSON Schema `pattern`: the OpenAPI document describes
 * a timestamp with it (beside the standard formats date-time and date, for the calendar)
 * instead of a format of our own that no client knows. The time's ranges are spelled out
 * because date-time alone would allow a leap second (23:59:60), which the parser refuses.
 * (services/api/test/openapi.test.ts holds the two equal over a list of samples)
 */
export const TIMESTAMP_PATTERN =
  '^\\d{4}-\\d{2}-\\d{2}$|^\\d{4}-\\d{2}-\\d{2}[Tt]([01]\\d|2[0-3]):[0-5]\\d:[0-5]\\d(\\.\\d+)?([Zz]|[+-]([01]\\d|2[0-3]):[0-5]\\d)$';

function daysInMonth(year: number, month: number): number {
  const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
  return [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1] ?? 0;
}

function isValidDate(year: number, month: number, day: number): boolean {
  return year >= 1 && month >= 1 && month <= 12 && day >= 1 && day <= daysInMonth(year, month);
}

/**
 * Parses an RFC 3339 date-time (offsets, and fractional seconds of any number of digits) or a
 * plain date (midnight UTC). Returns the instant in epoch milliseconds, or null for anything
 * else, impossible dates and times included (2026-02-30, 24:00:00, 23:59:60).
 *
 * Digits finer than a millisecond round the instant *up* to the next millisecond. Stored
 * timestamps, and every timestamp the service shows, are whole milliseconds, and a cursor
 * selects the rows strictly before it: for a whole-millisecond t, `t < cursor` holds exactly
 * when `t < ceil_ms(cursor)`. Truncating instead would drop the rows of the truncated
 * millisecond itself (09:15:02.123 is before 09:15:02.1234, but not before 09:15:02.123),
 * and the cursor of a row, `.123` or `.123000…`, names that row's millisecond unchanged.
 */
export function parseTimestamp(text: string): number | null {
  const dateOnly = DATE_ONLY.exec(text);
  if (dateOnly) {
    const [year, month, day] = dateOnly.slice(1, 4).map(Number) as [number, number, number];
    return isValidDate(year, month, day) ? utcMillis(year, month, day, 0, 0, 0, 0) : null;
  }
  const match = DATE_TIME.exec(text);
  if (!match) return null;
  const [year, month, day, hour, minute, second] = match.slice(1, 7).map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const fraction = match[7] ?? '';
  if (!isValidDate(year, month, day) || hour > 23 || minute > 59 || second > 59) return null;
  let offsetMinutes = 0;
  if (match[9]) {
    const offsetHours = Number(match[10]);
    const offsetMins = Number(match[11]);
    if (offsetHours > 23 || offsetMins > 59) return null;
    offsetMinutes = (match[9] === '-' ? -1 : 1) * (offsetHours * 60 + offsetMins);
  }
  const wholeMillis = Number(fraction.slice(0, 3).padEnd(3, '0'));
  const hasFinerDigits = /[1-9]/.test(fraction.slice(3));
  const millis = wholeMillis + (hasFinerDigits ? 1 : 0);
  return utcMillis(year, month, day, hour, minute, second, millis) - offsetMinutes * 60_000;
}

function utcMillis(year: number, month: number, day: number, h: number, m: number, s: number, ms: number): number {
  const date = new Date(0);
  // setUTCFullYear, unlike Date.UTC, does not map years 0..99 onto 1900..1999.
  date.setUTCFullYear(year, month - 1, day);
  date.setUTCHours(h, m, s, ms);
  return date.getTime();
}

/** `2026-03-07T09:15:02.123Z`: the one format every emitted timestamp uses. */
export function toIsoMillis(value: Date | number): string {
  return (typeof value === 'number' ? new Date(value) : value).toISOString();
}

export function toIsoMillisOrNull(value: Date | number | null | undefined): string | null {
  return value === null || value === undefined ? null : toIsoMillis(value);
}
