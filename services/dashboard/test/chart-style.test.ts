import { describe, expect, it } from '@jest/globals';
import { CANCEL_OUTCOMES } from '@retention/core/enums';
import { faintSegments, SERIES_COLORS } from '../src/components/chart-style.js';

/** WCAG's relative luminance of a `#rrggbb` colour. */
function luminance(hex: string): number {
  const [r, g, b] = [1, 3, 5].map((at) => {
    const channel = parseInt(hex.slice(at, at + 2), 16) / 255;
    return channel <= 0.03928 ? channel / 12.92 : ((channel + 0.055) / 1.055) ** 2.4;
  });
  return 0.2126 * r! + 0.7152 * g! + 0.0722 * b!;
}

function contrast(a: string, b: string): number {
  const [light, dark] = [luminance(a), luminance(b)].sort((x, y) => y - x);
  return (light! + 0.05) / (dark! + 0.05);
}

/** How far apart two colours' hues are, in degrees (0 to 180); null for a grey. */
function hueGap(a: string, b: string): number | null {
  const hue = (hex: string) => {
    const [r, g, b] = [1, 3, 5].map((at) => parseInt(hex.slice(at, at + 2), 16) / 255) as [number, number, number];
    const max = Math.max(r, g, b);
    const min = Math.min(r, g, b);
    if (max - min < 0.1) return null;
    const d = max - min;
    const h = max === r ? ((g - b) / d) % 6 : max === g ? (b - r) / d + 2 : (r - g) / d + 4;
    return (h * 60 + 360) % 360;
  };
  const [x, y] = [hue(a), hue(b)];
  if (x === null || y === null) return null;
  const gap = Math.abs(x - y);
  return Math.min(gap, 360 - gap);
}

describe('the charts\u2019 colours', () => {
  it('give every series 3:1 against the white card (WCAG 1.4.11)', () => {
    for (const color of SERIES_COLORS)
      expect({ color, enough: contrast(color, '#ffffff') >= 3 }).toEqual({ color, enough: true });
  });

  it('tell the cancel outcomes apart: no two of the six share a hue, and "Abandoned" is a lighter grey', () => {
    const outcomes = SERIES_COLORS.slice(0, CANCEL_OUTCOMES.length);
    // "Saved with a discount" (indigo) and "Abandoned" (a purple before) read as one colour.
    const abandoned = outcomes[CANCEL_OUTCOMES.indexOf('abandoned')]!;
    expect(hueGap(abandoned, outcomes[0]!)).toBeNull();
    for (const other of outcomes.filter((color) => color !== abandoned))
      expect(luminance(abandoned)).toBeGreaterThan(luminance(other));
    for (const [i, a] of outcomes.entries())
      for (const b of outcomes.slice(i + 1)) {
        const gap = hueGap(a, b);
        if (gap !== null) expect({ a, b, apart: gap >= 25 }).toEqual({ a, b, apart: true });
      }
  });
});

describe('a line with hollow points', () => {
  // Dec 0% over 1 closed, Jan 100% over 2: hollow; the rest solid.
  const faint = [true, true, false, false];
  const segments = faintSegments(faint, '#5046e4');
  const segment = (from: number) => ({ p0DataIndex: from, p1DataIndex: from + 1 });

  it('is dashed and pale on every segment that touches a hollow point', () => {
    for (const from of [0, 1]) {
      expect(segments.borderDash(segment(from))).toEqual([4, 4]);
      expect(segments.borderColor(segment(from))).toBe('#5046e466');
    }
  });

  it('is solid, in the series\u2019 colour, only between solid points', () => {
    expect(segments.borderDash(segment(2))).toBeUndefined();
    expect(segments.borderColor(segment(2))).toBeUndefined();
  });
});
