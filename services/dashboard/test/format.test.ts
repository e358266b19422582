import { describe, expect, it } from '@jest/globals';
import {
  formatDays,
  formatListTime,
  formatLocalTime,
  formatMoney,
  formatMoneyTick,
  pageLocale,
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

/** The API's days are already rounded half up to 2 places: shown as they are, never again rounded. */
describe('formatDays', () => {
  it.each([
    [1, '1 day'],
    [2.75, '2.75 days'],
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
