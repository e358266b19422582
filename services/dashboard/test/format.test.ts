import { describe, expect, it } from '@jest/globals';
import { formatListTime, formatLocalTime } from '../src/format.js';

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
