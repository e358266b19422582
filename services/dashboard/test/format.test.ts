import { describe, expect, it } from '@jest/globals';
import {
  daysAreUtc,
  formatDays,
  formatListTime,
  formatListTimePieces,
  formatLocalTime,
  formatMoney,
  formatMoneyTick,
  formatPercent,
  formatPercentTick,
  formatUtcDay,
  knownZone,
  pageLocale,
  startOfDayIn,
} from '../src/format.js';

/** The dashboard's time formats (src/format.ts): a time of day always says in which zone. */
describe('formatListTime', () => {
  const iso = '2026-11-25T15:20:00.000Z';
  const now = new Date('2026-11-26T12:00:00.000Z');
  /** The zone's name as the full format writes it, its last word (`EST`, `UTC`, `GMT+1`). */
  const zone = formatLocalTime(iso).split(' ').at(-1)!;

  it('names the zone after a time of day, as the full format does', () => {
    expect(formatListTime(iso, true, now).endsWith(` ${zone}`)).toBe(true);
  });

  it('writes a bare day without a time of day, and without a zone', () => {
    expect(formatListTime(iso, false, now)).not.toContain(zone);
    expect(formatListTime('2024-11-25T15:20:00.000Z', true, now)).toMatch(/2024$/);
  });

  it('splits a time of day from its day where a narrow column may wrap, the text unchanged', () => {
    const [day, timeOfDay] = formatListTimePieces(iso, true, now);
    expect(day! + timeOfDay!).toBe(formatListTime(iso, true, now));
    // Under jest LOCALE is en-US: "Nov 25, " then "3:20 PM UTC" (in the machine's zone).
    expect(day).toMatch(/^Nov 2[56], $/);
    expect(timeOfDay).toMatch(new RegExp(`^\\d{1,2}:20 [AP]M ${zone.replace('+', '\\+')}$`));
    // One piece when there is no time of day to split off.
    expect(formatListTimePieces(iso, false, now)).toEqual([formatListTime(iso, false, now)]);
    expect(formatListTimePieces('2024-11-25T15:20:00.000Z', true, now)).toEqual(['Nov 25, 2024']);
  });
});

describe('formatUtcDay', () => {
  it("writes a UTC day as the page's other dates are written, whatever the viewer's zone", () => {
    // Under jest there is no browser: LOCALE is en-US.
    expect(formatUtcDay('2026-10-30')).toBe('Oct 30, 2026');
    expect(formatUtcDay('2027-01-01')).toBe('Jan 1, 2027');
  });
});

describe('formatLocalTime', () => {
  const iso = '2026-11-25T15:20:41.000Z';
  it('writes the minutes, or the seconds too when asked, naming the zone either way', () => {
    const zone = formatLocalTime(iso).split(' ').at(-1)!;
    expect(formatLocalTime(iso)).toMatch(/\b\d{1,2}:20 (AM|PM) \S+$/);
    expect(formatLocalTime(iso, true)).toMatch(/\b\d{1,2}:20:41 (AM|PM) \S+$/);
    expect(formatLocalTime(iso, true).endsWith(` ${zone}`)).toBe(true);
  });
});

/**
 * Money shows exactly the minor units stored, by the service's ISO 4217 exponents
 * (@retention/core/money), not the runtime's CLDR digits: those give HUF and IQD no decimals, and
 * HUF 57,955.29 stored as 5795529 read HUF 5,795,529. (Jest runs in Node's en-US; `\u00a0` is
 * the no-break space Intl puts after a currency code.)
 */
describe('formatMoney', () => {
  it.each([
    [5_795_529, 'huf', 'HUF\u00a057,955.29'],
    [100, 'huf', 'HUF\u00a01.00'],
    [1_500_000, 'iqd', 'IQD\u00a01,500.000'],
    [15_000, 'jpy', '¥15,000'],
    [1_234_500, 'kwd', 'KWD\u00a01,234.500'],
    [20_000, 'usd', '$200.00'],
    [20_050, 'USD', '$200.50'],
  ])('%i minor units of %s read %s', (minorUnits, currency, expected) => {
    expect(formatMoney(minorUnits, currency)).toBe(expected);
  });

  it('writes a dash for no amount', () => {
    expect(formatMoney(null, 'usd')).toBe('—');
  });
});

describe('formatMoneyTick', () => {
  it.each([
    [20_000_000, 'huf', 'HUF\u00a0200,000'],
    [250, 'usd', '$2.50'],
    [0, 'usd', '$0'],
    [15_000, 'jpy', '¥15,000'],
    [1_500_000, 'iqd', 'IQD\u00a01,500'],
    [1_500_500, 'iqd', 'IQD\u00a01,500.500'],
  ])('an axis tick of %i minor units of %s reads %s', (minorUnits, currency, expected) => {
    expect(formatMoneyTick(minorUnits, currency)).toBe(expected);
  });
});

/**
 * The API's days (rounded half up to 2 places) to one place at most, as the rates beside them: the
 * same number as GET /api/v1/stats says, to less precision (docs/decisions.md).
 */
describe('formatDays', () => {
  it.each([
    [1, '1 day'],
    [2.75, '2.8 days'],
    [2.74, '2.7 days'],
    [3.5, '3.5 days'],
    [0.5, '0.5 days'],
    [2, '2 days'],
    [0, '0 days'],
    [null, '—'],
  ])('%p days read %s', (days, expected) => {
    expect(formatDays(days)).toBe(expected);
  });
});

/** The page's English: the browser's first English tag keeps its conventions; any other language is en-US. */
describe('pageLocale', () => {
  it.each([
    [['de-DE'], 'en-US'],
    [['de-DE', 'en-GB', 'en-US'], 'en-GB'],
    [['en-AU'], 'en-AU'],
    [['fr', 'EN-in'], 'en-IN'],
    [['english', 'en'], 'en'],
    [[], 'en-US'],
  ])('%j -> %s', (languages, expected) => {
    expect(pageLocale(languages)).toBe(expected);
  });
});

/** A picked day as the instant it starts in a named zone (docs/dashboard-ui.md, "Campaign date filters"). */
describe('startOfDayIn', () => {
  it.each([
    ['2026-11-01', 'Pacific/Auckland', '2026-10-31T11:00:00.000Z'],
    // Los Angeles's clocks go back at 2 AM on Nov 1, 2026: the day starts at -07:00, the next at -08:00.
    ['2026-11-01', 'America/Los_Angeles', '2026-11-01T07:00:00.000Z'],
    ['2026-11-02', 'America/Los_Angeles', '2026-11-02T08:00:00.000Z'],
    ['2026-03-08', 'America/New_York', '2026-03-08T05:00:00.000Z'],
    ['2026-03-09', 'America/New_York', '2026-03-09T04:00:00.000Z'],
    ['2026-11-20', 'UTC', '2026-11-20T00:00:00.000Z'],
    // Santiago skips midnight on Sep 6, 2026 (00:00 -04 is 01:00 -03): the day starts at 1 AM.
    ['2026-09-06', 'America/Santiago', '2026-09-06T04:00:00.000Z'],
  ])('%s in %s starts at %s', (day, zone, expected) => {
    expect(startOfDayIn(day, zone)).toBe(expected);
  });

  it('passes anything but a real day on for the API to refuse', () => {
    expect(startOfDayIn('2026-02-30', 'UTC')).toBe('2026-02-30');
    expect(startOfDayIn('', 'UTC')).toBe('');
    expect(startOfDayIn('2026-11-01T10:00:00Z', 'UTC')).toBe('2026-11-01T10:00:00Z');
  });
});

describe('knownZone', () => {
  it('spells a known zone as the runtime does, and refuses unknown names and offsets', () => {
    expect(knownZone('Pacific/Auckland')).toBe('Pacific/Auckland');
    expect(knownZone('pacific/auckland')).toBe('Pacific/Auckland');
    for (const name of ['Mars/Olympus', '+13:00', '', 'Pacific/Auckland\n', '../etc'])
      expect(knownZone(name)).toBeNull();
  });

  it('names a renamed zone by its current name, under either name (ICU keeps Asia/Calcutta)', () => {
    for (const name of ['Asia/Kolkata', 'Asia/Calcutta', 'asia/calcutta']) expect(knownZone(name)).toBe('Asia/Kolkata');
    expect(knownZone('Europe/Kiev')).toBe('Europe/Kyiv');
    expect(knownZone('Asia/Saigon')).toBe('Asia/Ho_Chi_Minh');
  });

  it('tells a zone whose days are UTC’s from one that is UTC only half the year', () => {
    expect(daysAreUtc('UTC')).toBe(true);
    expect(daysAreUtc('Africa/Abidjan')).toBe(true);
    expect(daysAreUtc('Europe/London')).toBe(false);
    expect(daysAreUtc('Pacific/Auckland')).toBe(false);
  });
});

describe('formatPercent', () => {
  it('writes every rate to one decimal, so cards side by side read alike', () => {
    expect([0.64, 0.589, 1, 0].map((ratio) => formatPercent(ratio))).toEqual(['64.0%', '58.9%', '100.0%', '0.0%']);
    expect(formatPercent(null)).toBe('—');
  });

  it('writes an axis tick as a whole percentage where it is one', () => {
    expect([0.25, 1, 0.125].map((ratio) => formatPercentTick(ratio))).toEqual(['25%', '100%', '12.5%']);
  });
});
