import { CURRENCY_PATTERN, MAX_STORED_AMOUNT, minorUnitExponent } from '@retention/core/money';

/**
 * Amounts as a person types them (`100`, `99.50`, `1,000`) and as the API filters by them: an
 * integer in the currency's minor units (docs/dashboard-api.md, "Amounts filter within
 * currency"). The exponent is the service's ISO 4217 table (minorUnitExponent: JPY 0, USD 2, KWD
 * 3), the one formatMoney shows amounts with, so what is typed is what the list shows.
 */

/** Digits, with an optional point and decimals; thousands may be grouped by commas (`1,000.50`). */
const TYPED_AMOUNT = /^(\d+|\d{1,3}(?:,\d{3})+)(?:\.(\d*))?$/;

/** A typed amount in minor units (the digits, as the address keeps them), or why it is not one. */
export type TypedAmount = { minor: string } | { problem: string };

/** `text` in `currency`'s minor units: `99.50` usd is `9950`, `1000` jpy is `1000`. Empty text is not asked for. */
export function minorUnitsOf(text: string, currency: string): TypedAmount {
  const code = currency.toUpperCase();
  const match = TYPED_AMOUNT.exec(text.trim());
  if (!match) return { problem: `Type an amount in ${code} such as 100 or 99.50, without a sign.` };
  const exponent = minorUnitExponent(currency);
  const whole = match[1]!.replaceAll(',', '');
  const decimals = (match[2] ?? '').replace(/0+$/, '');
  if (decimals.length > exponent) {
    return {
      problem:
        exponent === 0 ? `${code} amounts have no decimals.` : `${code} amounts have at most ${exponent} decimals.`,
    };
  }
  const minor = BigInt(whole) * 10n ** BigInt(exponent) + BigInt(decimals.padEnd(exponent, '0') || '0');
  if (minor > MAX_STORED_AMOUNT) return { problem: 'That is more than any campaign can be.' };
  return { minor: String(minor) };
}

/**
 * Minor units (the address's digits) as a box shows them, in major units: `9950` usd is `99.50`,
 * `10000` usd is `100`, `1000` jpy is `1000`. Anything else (a hand-edited address) as it is.
 */
export function majorUnitsText(minor: string, currency: string): string {
  if (!/^\d+$/.test(minor) || !CURRENCY_PATTERN.test(currency)) return minor;
  const exponent = minorUnitExponent(currency);
  const digits = minor.replace(/^0+(?=\d)/, '').padStart(exponent + 1, '0');
  const whole = digits.slice(0, digits.length - exponent);
  const fraction = digits.slice(digits.length - exponent);
  return /^0*$/.test(fraction) ? whole : `${whole}.${fraction}`;
}
