import { describe, expect, it } from '@jest/globals';
import { parseTimestamp, toIsoMillis } from '../src/index.js';

describe('parseTimestamp', () => {
  it.each([
    ['2026-03-07T09:15:02Z', '2026-03-07T09:15:02.000Z'],
    ['2026-03-07T09:15:02.123Z', '2026-03-07T09:15:02.123Z'],
    ['2026-03-07t09:15:02.1z', '2026-03-07T09:15:02.100Z'],
    ['2026-03-07T09:15:02+01:30', '2026-03-07T07:45:02.000Z'],
    ['2026-03-07T00:15:02-05:00', '2026-03-07T05:15:02.000Z'],
    ['2026-03-07', '2026-03-07T00:00:00.000Z'],
    ['2024-02-29', '2024-02-29T00:00:00.000Z'],
    ['2000-02-29T23:59:59.999Z', '2000-02-29T23:59:59.999Z'],
    ['0099-01-01', '0099-01-01T00:00:00.000Z'],
  ])('accepts %s', (text, iso) => {
    expect(toIsoMillis(parseTimestamp(text)!)).toBe(iso);
  });

  it('rounds sub-millisecond fractions up, so cursor comparisons on millisecond rows stay exact', () => {
    expect(toIsoMillis(parseTimestamp('2026-03-07T09:15:02.123000Z')!)).toBe('2026-03-07T09:15:02.123Z');
    expect(toIsoMillis(parseTimestamp('2026-03-07T09:15:02.123001Z')!)).toBe('2026-03-07T09:15:02.124Z');
    expect(toIsoMillis(parseTimestamp('2026-03-07T09:15:02.999999Z')!)).toBe('2026-03-07T09:15:03.000Z');
  });

  it('accepts any number of fraction digits, as RFC 3339 does', () => {
    expect(toIsoMillis(parseTimestamp('2026-11-20T10:00:00.1234567891Z')!)).toBe('2026-11-20T10:00:00.124Z');
    expect(toIsoMillis(parseTimestamp(`2026-03-07T09:15:02.123${'0'.repeat(60)}Z`)!)).toBe('2026-03-07T09:15:02.123Z');
    expect(toIsoMillis(parseTimestamp(`2026-03-07T09:15:02.123${'0'.repeat(60)}1+01:00`)!)).toBe(
      '2026-03-07T08:15:02.124Z',
    );
    expect(toIsoMillis(parseTimestamp(`2026-03-07T09:15:02.${'9'.repeat(5_000)}Z`)!)).toBe('2026-03-07T09:15:03.000Z');
  });

  it('selects, for every whole-millisecond row, exactly the rows strictly before the exact instant', () => {
    // Rows at .122, .123 and .124; cursors at, just above and just below .123.
    const rows = [122, 123, 124].map((ms) => Date.UTC(2026, 2, 7, 9, 15, 2, ms));
    const before = (cursor: string) => rows.filter((row) => row < parseTimestamp(cursor)!).map((row) => row % 1000);
    expect(before('2026-03-07T09:15:02.123Z')).toEqual([122]);
    expect(before('2026-03-07T09:15:02.123000000000Z')).toEqual([122]);
    expect(before('2026-03-07T09:15:02.1230000000001Z')).toEqual([122, 123]);
    expect(before('2026-03-07T09:15:02.1229999999999Z')).toEqual([122]);
    expect(before('2026-03-07T09:15:02.12200000001Z')).toEqual([122]);
  });

  it.each([
    '',
    'now',
    '1700000000',
    '2026-02-30',
    '2025-02-29',
    '1900-02-29',
    '2026-13-01',
    '2026-00-10',
    '2026-04-31T00:00:00Z',
    '2026-03-07T24:00:00Z',
    '2026-03-07T23:60:00Z',
    '2026-03-07T23:59:60Z',
    '2026-03-07T09:15:02',
    '2026-03-07 09:15:02Z',
    '2026-03-07T09:15Z',
    '2026-03-07T09:15:02.Z',
    '2026-03-07T09:15:02+24:00',
    '2026-03-07T09:15:02+0100',
    '2026-3-7',
    '+002026-03-07',
    '0000-01-01',
    '２０２６-03-07',
    "2026-03-07'; DROP TABLE customers;--",
    `2026-03-07T09:15:02.${'1'.repeat(60)}`,
    '2026-03-07T09:15:02 05:30', // a '+' sent unencoded in a query string arrives as a space
  ])('refuses %p', (text) => {
    expect(parseTimestamp(text)).toBeNull();
  });
});
