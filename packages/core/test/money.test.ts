import { describe, expect, it } from '@jest/globals';
import { convertMinorUnits, isValidFxRate, mergeFxRates, minorUnitExponent } from '../src/index.js';

const rates = mergeFxRates([
  ['eur', '0.8'],
  ['jpy', '150'],
  ['kwd', '0.3'],
]);

describe('FX conversion in minor units', () => {
  it('knows the minor-unit exponents', () => {
    expect([minorUnitExponent('usd'), minorUnitExponent('jpy'), minorUnitExponent('kwd')]).toEqual([2, 0, 3]);
  });

  it('converts across exponents exactly', () => {
    // 1,500 yen = $10.00
    expect(convertMinorUnits(1500, 'jpy', 'usd', rates)).toBe(1000n);
    // $10.00 = 1,500 yen
    expect(convertMinorUnits(1000, 'usd', 'jpy', rates)).toBe(1500n);
    // $10.00 = 3.000 KWD = 3000 fils
    expect(convertMinorUnits(1000, 'usd', 'kwd', rates)).toBe(3000n);
    // 3.000 KWD = 1,500 yen
    expect(convertMinorUnits(3000, 'kwd', 'jpy', rates)).toBe(1500n);
    // €8.00 = $10.00
    expect(convertMinorUnits(800, 'eur', 'usd', rates)).toBe(1000n);
  });

  it('rounds half up once, at the end', () => {
    // 1 yen = 0.6667 cents -> 1 cent; 1 cent = 1.5 yen -> 2 yen
    expect(convertMinorUnits(1, 'jpy', 'usd', rates)).toBe(1n);
    expect(convertMinorUnits(1, 'usd', 'jpy', rates)).toBe(2n);
    expect(convertMinorUnits(0, 'usd', 'jpy', rates)).toBe(0n);
  });

  it('is exact for amounts beyond float precision', () => {
    expect(convertMinorUnits(9_007_199_254_740_993n, 'usd', 'usd', rates)).toBe(9_007_199_254_740_993n);
    expect(convertMinorUnits(3_000_000_000_000_000n, 'kwd', 'usd', rates)).toBe(1_000_000_000_000_000n);
  });

  it('returns null for a currency without a rate', () => {
    expect(convertMinorUnits(100, 'xyz', 'usd', rates)).toBeNull();
    expect(convertMinorUnits(100, 'usd', 'xyz', rates)).toBeNull();
  });

  it('validates rates', () => {
    for (const good of ['1', '0.92', '150', '0.000001']) expect(isValidFxRate(good)).toBe(true);
    for (const bad of ['0', '0.0', '-1', '1e3', 'abc', '', '.5', '01', '1.']) expect(isValidFxRate(bad)).toBe(false);
  });
});
