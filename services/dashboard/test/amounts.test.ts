import { describe, expect, it } from '@jest/globals';
import { isMinorUnits } from '@retention/core/money';
import { majorUnitsText, minorUnitsOf } from '../src/amounts.js';

/**
 * The Amount filter's conversions (src/amounts.ts): what a person types, in major units, to the
 * API's minor units with the service's ISO 4217 exponent, and back for the boxes.
 */
describe('minorUnitsOf', () => {
  it('converts with the currency’s exponent: USD 2, JPY 0, KWD 3', () => {
    expect(minorUnitsOf('100', 'usd')).toEqual({ minor: '10000' });
    expect(minorUnitsOf('99.50', 'usd')).toEqual({ minor: '9950' });
    expect(minorUnitsOf('99.5', 'usd')).toEqual({ minor: '9950' });
    expect(minorUnitsOf('0.01', 'usd')).toEqual({ minor: '1' });
    expect(minorUnitsOf(' 1,000.00 ', 'usd')).toEqual({ minor: '100000' });
    expect(minorUnitsOf('100.', 'usd')).toEqual({ minor: '10000' });
    expect(minorUnitsOf('0', 'usd')).toEqual({ minor: '0' });
    expect(minorUnitsOf('10000', 'jpy')).toEqual({ minor: '10000' });
    expect(minorUnitsOf('10.00', 'jpy')).toEqual({ minor: '10' });
    expect(minorUnitsOf('1.234', 'kwd')).toEqual({ minor: '1234' });
    expect(minorUnitsOf('92233720368547758.07', 'usd')).toEqual({ minor: '9223372036854775807' });
  });

  it('says why an amount is not one', () => {
    const typeOne = { problem: 'Type an amount in USD such as 100 or 99.50, without a sign.' };
    for (const text of ['', 'ten', '-5', '+5', '1e3', '1,00', '1.000,50', '$100', '.5']) {
      expect([text, minorUnitsOf(text, 'usd')]).toEqual([text, typeOne]);
    }
    expect(minorUnitsOf('99.505', 'usd')).toEqual({ problem: 'USD amounts have at most 2 decimals.' });
    expect(minorUnitsOf('10.5', 'jpy')).toEqual({ problem: 'JPY amounts have no decimals.' });
    expect(minorUnitsOf('92233720368547758.08', 'usd')).toEqual({ problem: 'That is more than any campaign can be.' });
  });
});

describe('majorUnitsText and isMinorUnits', () => {
  it('shows the address’s minor units as a person types them', () => {
    expect(majorUnitsText('10000', 'usd')).toBe('100');
    expect(majorUnitsText('9950', 'usd')).toBe('99.50');
    expect(majorUnitsText('1', 'usd')).toBe('0.01');
    expect(majorUnitsText('0', 'usd')).toBe('0');
    expect(majorUnitsText('10000', 'jpy')).toBe('10000');
    expect(majorUnitsText('1234', 'kwd')).toBe('1.234');
    expect(majorUnitsText('99.5', 'usd')).toBe('99.5');
    expect(majorUnitsText('', 'usd')).toBe('');
  });

  it('takes the API’s digits only', () => {
    for (const value of ['0', '1', '9950', '9223372036854775807'])
      expect([value, isMinorUnits(value)]).toEqual([value, true]);
    for (const value of ['', '-1', '01', '99.5', '9223372036854775808', '1e3']) {
      expect([value, isMinorUnits(value)]).toEqual([value, false]);
    }
  });
});
