import { currentZoneName } from '@retention/core/time-zones';
import { minorUnitExponent } from '@retention/core/money';
import { roundedRatio } from '@retention/core/ratio';

/**
 * The language of the page's numbers and dates: the first English tag among the browser's
 * languages (`en-GB`, `en-AU`, `en-IN` keep their own conventions), else `en-US`. The UI is
 * English (`<html lang="en">`); following the browser's own locale put `2.547,19 $` and `März`
 * inside English sentences for a de-DE browser (docs/dashboard-ui.md, "Locale"). Every Intl
 * formatter of the dashboard takes this one.
 */
export function pageLocale(languages: readonly string[] = browserLanguages()): string {
  for (const tag of languages) {
    if (!/^en(-|$)/i.test(tag)) continue;
    try {
      const [canonical] = Intl.getCanonicalLocales(tag);
      if (canonical && Intl.NumberFormat.supportedLocalesOf(canonical).length > 0) return canonical;
    } catch {
      // Not a well-formed tag: the next one.
    }
  }
  return 'en-US';
}

function browserLanguages(): readonly string[] {
  if (typeof navigator === 'undefined') return [];
  return navigator.languages?.length ? navigator.languages : navigator.language ? [navigator.language] : [];
}

export const LOCALE = pageLocale();

/**
 * Money in minor units, shown with exactly the digits the service stores: the exponent is the
 * service's ISO 4217 table (@retention/core/money: JPY 0, USD 2, KWD and IQD 3), never the
 * browser's, whose CLDR data gives HUF, IDR, IQD, PKR and others fewer decimals than ISO, and
 * so showed HUF 57,955.29 stored as 5795529 as HUF 5,795,529 (docs/dashboard-ui.md, "Money").
 */
const moneyFormats = new Map<string, Intl.NumberFormat>();

function moneyFormat(currency: string, digits = minorUnitExponent(currency.toLowerCase())): Intl.NumberFormat {
  const key = `${currency.toLowerCase()}:${digits}`;
  let format = moneyFormats.get(key);
  if (!format) {
    format = new Intl.NumberFormat(LOCALE, {
      style: 'currency',
      currency: currency.toUpperCase(),
      minimumFractionDigits: digits,
      maximumFractionDigits: digits,
    });
    moneyFormats.set(key, format);
  }
  return format;
}

export function formatMoney(minorUnits: number | null | undefined, currency: string): string {
  if (minorUnits === null || minorUnits === undefined) return '—';
  return moneyFormat(currency).format(minorUnits / 10 ** minorUnitExponent(currency.toLowerCase()));
}

/**
 * A chart axis's money tick: a whole amount without its minor units (`HUF 200,000`, where a
 * column of `HUF 200,000.00` repeats `.00` on every line), any other as formatMoney writes it.
 * The chart's table and tooltips keep formatMoney's exact digits.
 */
export function formatMoneyTick(minorUnits: number, currency: string): string {
  const scale = 10 ** minorUnitExponent(currency.toLowerCase());
  if (minorUnits % scale !== 0) return formatMoney(minorUnits, currency);
  return moneyFormat(currency, 0).format(minorUnits / scale);
}

/**
 * The one way a whole time is written (`Nov 26, 2026, 2:08 PM EST`), in the viewer's zone and
 * naming it: pages showed times in the viewer's zone without saying which, next to the
 * Overview's UTC days. (`dateStyle` cannot be combined with `timeZoneName`, hence the parts.)
 */
const local = new Intl.DateTimeFormat(LOCALE, {
  year: 'numeric',
  month: 'short',
  day: 'numeric',
  hour: 'numeric',
  minute: '2-digit',
  timeZoneName: 'short',
});

/** The same with the seconds, for a time that is seconds away (a wait Stripe asked for, an event's next try). */
const localWithSeconds = new Intl.DateTimeFormat(LOCALE, {
  year: 'numeric',
  month: 'short',
  day: 'numeric',
  hour: 'numeric',
  minute: '2-digit',
  second: '2-digit',
  timeZoneName: 'short',
});

export function formatLocalTime(iso: string, withSeconds = false): string {
  return (withSeconds ? localWithSeconds : local).format(new Date(iso));
}

const listDay = new Intl.DateTimeFormat(LOCALE, { month: 'short', day: 'numeric' });
const listDayYear = new Intl.DateTimeFormat(LOCALE, { month: 'short', day: 'numeric', year: 'numeric' });
const listDayTime = new Intl.DateTimeFormat(LOCALE, {
  month: 'short',
  day: 'numeric',
  hour: 'numeric',
  minute: '2-digit',
  timeZoneName: 'short',
});

/**
 * A time as a list cell shows it, short enough for one line: the day (`Nov 25`), with the time
 * of day when asked (`Nov 25, 10:20 AM EST`: a time of day names its zone, as `formatLocalTime`
 * does, or the Security log and Team read as if in no zone at all); a time of another year than
 * this one shows the year instead (`Nov 25, 2025`), as a mail client does. In the viewer's zone;
 * `<Time short>` gives the full time and the UTC time on hover.
 */
export function formatListTime(iso: string, withTime = false, now: Date = new Date()): string {
  return formatListTimePieces(iso, withTime, now).join('');
}

const TIME_PARTS: ReadonlySet<Intl.DateTimeFormatPartTypes> = new Set([
  'hour',
  'minute',
  'second',
  'dayPeriod',
  'timeZoneName',
]);

/**
 * `formatListTime` as the pieces a narrow column may put on two lines: the day with the literal
 * after it, then the time of day with its zone (`Nov 25, ` and `10:20 AM GMT+1`); one piece
 * without a time of day. In whichever order the locale writes them: the split is where the
 * parts turn from the day's to the time's (or back).
 */
export function formatListTimePieces(iso: string, withTime = false, now: Date = new Date()): string[] {
  const date = new Date(iso);
  if (date.getFullYear() !== now.getFullYear()) return [listDayYear.format(date)];
  if (!withTime) return [listDay.format(date)];
  const parts = listDayTime.formatToParts(date);
  const firstGroup = parts.find((part) => part.type !== 'literal');
  const split = parts.findIndex(
    (part) => part.type !== 'literal' && TIME_PARTS.has(part.type) !== TIME_PARTS.has(firstGroup!.type),
  );
  if (split < 0) return [parts.map((part) => part.value).join('')];
  const text = (from: number, to?: number) =>
    parts
      .slice(from, to)
      .map((part) => part.value)
      .join('');
  return [text(0, split), text(split)];
}

const utcDay = new Intl.DateTimeFormat(LOCALE, { month: 'short', day: 'numeric', year: 'numeric', timeZone: 'UTC' });

/**
 * A UTC day (`2026-10-30`) as the page writes a date (`Oct 30, 2026`), always with its year; the
 * Overview's period starts on one, and said it in ISO beside every other date's words.
 */
export function formatUtcDay(day: string): string {
  return utcDay.format(new Date(`${day}T00:00:00Z`));
}

export function formatUtcTime(iso: string): string {
  return `${new Date(iso).toISOString().replace('T', ' ').slice(0, 19)} UTC`;
}

/**
 * A rate always to one decimal (`64.0%`, not `64%`): the Overview's cards sit side by side, and
 * `64%` beside `58.9%` read as two kinds of figure. Chart axes use formatPercentTick.
 */
export function formatPercent(ratio: number | null | undefined): string {
  if (ratio === null || ratio === undefined) return '—';
  return new Intl.NumberFormat(LOCALE, { style: 'percent', minimumFractionDigits: 1, maximumFractionDigits: 1 }).format(
    ratio,
  );
}

/** An axis tick of a rate chart: a whole percentage where it is one (`25%`), as ticks are read. */
export function formatPercentTick(ratio: number): string {
  return new Intl.NumberFormat(LOCALE, { style: 'percent', maximumFractionDigits: 1 }).format(ratio);
}

/**
 * `part` of `whole` as a percentage to one decimal, rounded once, half up, from the counts: the
 * stats' rates are already rounded to 4 places, and a rate such as 0.5935 (127 of 214, 59.346%)
 * rounded again read 59.4% beside counts that say 59.3%. Null (formatPercent's "—") when there
 * is no whole.
 */
export function shareOf(part: number, whole: number): number | null {
  return whole === 0 ? null : roundedRatio(part, whole, 3);
}

export function formatNumber(value: number | null | undefined, digits = 0): string {
  if (value === null || value === undefined) return '—';
  return new Intl.NumberFormat(LOCALE, { maximumFractionDigits: digits }).format(value);
}

/**
 * A number of days to one place at most, as the rates beside it (`3.5 days`, `2 days`, never
 * `2.0`), in the page's language. The stats' 2 places are rounded again (2.75 reads 2.8, as
 * `GET /api/v1/stats` says 2.75: the same number, shown to less). Singular for exactly one day.
 */
export function formatDays(days: number | null | undefined): string {
  if (days === null || days === undefined) return '—';
  return `${formatNumber(days, 1)} ${days === 1 ? 'day' : 'days'}`;
}

/**
 * An exchange rate as the API gives it, a decimal as text (`0.92`, `1310`), with all its digits
 * (up to 12 places) in the page's language: formatted from the text, which a float would round.
 */
export function formatRate(perUsd: string): string {
  // Intl reads a numeric string as the exact decimal it spells (ES2023); its type says number.
  return new Intl.NumberFormat(LOCALE, { maximumFractionDigits: 12 }).format(perUsd as unknown as number);
}

const monthFormat = new Intl.DateTimeFormat(LOCALE, { month: 'short', year: 'numeric', timeZone: 'UTC' });

/** `2026-03` -> `Mar 2026` (a UTC month, named in the page's language). */
export function formatMonth(month: string): string {
  return monthFormat.format(new Date(`${month}-01T00:00:00Z`));
}

/** The viewer's time zone, as the browser names it (`America/Los_Angeles`). */
export function viewerZone(): string {
  return currentZoneName(new Intl.DateTimeFormat(LOCALE).resolvedOptions().timeZone);
}

/** A zone from the address, checked before any use (the export's `tz` is checked the same way). */
export { knownZone } from '@retention/core/time-zones';

const zoneWalls = new Map<string, Intl.DateTimeFormat>();

/** The wall-clock time in `zone` at `instant`, as if it were UTC (ms): its offset is the difference. */
function wallClock(instant: number, zone: string): number {
  let format = zoneWalls.get(zone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    zoneWalls.set(zone, format);
  }
  const parts = format.formatToParts(instant);
  const part = (type: Intl.DateTimeFormatPartTypes) => Number(parts.find((entry) => entry.type === type)?.value);
  return Date.UTC(part('year'), part('month') - 1, part('day'), part('hour'), part('minute'), part('second'));
}

/** Whether `zone`'s days are UTC's: no offset in January nor in July (UTC, Africa/Abidjan, Iceland). */
export function daysAreUtc(zone: string, year = new Date().getUTCFullYear()): boolean {
  return [Date.UTC(year, 0, 1), Date.UTC(year, 6, 1)].every((instant) => wallClock(instant, zone) === instant);
}

/**
 * A day picked in a date field (`2026-11-20`) as the instant it starts in `zone` (an IANA name
 * knownZone accepted): the first instant whose date there is that day, also where midnight is
 * skipped by a change of clocks. Campaigns filters by the days of one zone, named on the page
 * (docs/dashboard-ui.md, "Campaign date filters"). Anything else is passed on as it is, for the
 * API to take or refuse.
 */
export function startOfDayIn(day: string, zone: string): string {
  const parts = /^(\d{4})-(\d{2})-(\d{2})$/.exec(day);
  if (!parts) return day;
  const midnight = Date.UTC(Number(parts[1]), Number(parts[2]) - 1, Number(parts[3]));
  if (Number.isNaN(midnight) || new Date(midnight).toISOString().slice(0, 10) !== day) return day;
  // Midnight there is UTC midnight less the offset then; the offset at that first guess may be
  // the other side of a change of clocks, hence the second guess. The earliest guess that is on
  // the day wins.
  const first = midnight - (wallClock(midnight, zone) - midnight);
  const second = midnight - (wallClock(first, zone) - first);
  const onTheDay = [first, second].filter((instant) => wallClock(instant, zone) >= midnight);
  return new Date(onTheDay.length ? Math.min(...onTheDay) : Math.max(first, second)).toISOString();
}

/** An API value for people: `card_update_required` -> `card update required`. */
export function humanize(value: string): string {
  return value.replaceAll('_', ' ');
}

/**
 * A webhook attempt's error, unless it only says its HTTP status again (`HTTP 404`), which is
 * shown beside it: the same words twice read as two things.
 */
export function errorBesideStatus(error: string | null, httpStatus: number | null): string | null {
  return httpStatus !== null && error === `HTTP ${httpStatus}` ? null : error;
}
