/**
 * Currencies and FX. Amounts are integers in minor units; a currency's minor-unit exponent
 * (ISO 4217) says how many minor units make a major one: 2 for usd, 0 for jpy, 3 for kwd.
 * Conversion is exact rational arithmetic on BigInt, rounded half up once at the end.
 */

export const CURRENCY_PATTERN = /^[a-z]{3}$/;

/**
 * The largest amount an action or a fixture accepts: 10^12 minor units (ten billion dollars,
 * a trillion yen), far above any real invoice or plan. Stats add amounts up; at this cap it
 * takes about 9,000 of them to pass 2^53, where a sum stops being an exact JavaScript number.
 */
export const MAX_AMOUNT_MINOR_UNITS = 1_000_000_000_000;

/**
 * The largest amount an amount column holds (`bigint`, checked `>= 0`): 2^63 − 1 minor units.
 * A filter by amount takes any amount a row can have, so none that could match is refused.
 */
export const MAX_STORED_AMOUNT = 9_223_372_036_854_775_807n;

/**
 * Whether `value` is an amount filter's value (`min_amount`, `max_amount`): an integer in minor
 * units written in digits without leading zeros, 0 to MAX_STORED_AMOUNT. The API's rule, which
 * the dashboard checks an address against before asking.
 */
export function isMinorUnits(value: string): boolean {
  return /^(?:0|[1-9]\d{0,18})$/.test(value) && BigInt(value) <= MAX_STORED_AMOUNT;
}

/** Currencies with no minor unit (exponent 0) and with three decimals (exponent 3); the rest have 2. */
export const ZERO_DECIMAL_CURRENCIES: readonly string[] = [
  'bif',
  'clp',
  'djf',
  'gnf',
  'isk',
  'jpy',
  'kmf',
  'krw',
  'pyg',
  'rwf',
  'ugx',
  'uyi',
  'vnd',
  'vuv',
  'xaf',
  'xof',
  'xpf',
];
export const THREE_DECIMAL_CURRENCIES: readonly string[] = ['bhd', 'iqd', 'jod', 'kwd', 'lyd', 'omr', 'tnd'];

export function minorUnitExponent(currency: string): number {
  if (ZERO_DECIMAL_CURRENCIES.includes(currency)) return 0;
  if (THREE_DECIMAL_CURRENCIES.includes(currency)) return 3;
  return 2;
}

/**
 * Shipped defaults: units of each currency per one US dollar. Approximate mid-market rates;
 * operators set current ones with `cli fx set`, which override these.
 */
export const DEFAULT_FX_RATES_PER_USD: Readonly<Record<string, string>> = {
  usd: '1',
  eur: '0.92',
  gbp: '0.79',
  jpy: '150',
  cad: '1.36',
  aud: '1.52',
  nzd: '1.65',
  chf: '0.88',
  sek: '10.5',
  nok: '10.7',
  dkk: '6.87',
  pln: '4.0',
  czk: '23',
  brl: '5.0',
  mxn: '17',
  inr: '83',
  sgd: '1.34',
  hkd: '7.8',
  krw: '1350',
  kwd: '0.307',
  bhd: '0.376',
};

/** A positive decimal such as `0.92` or `150`: up to 12 digits before and after the point. */
export const FX_RATE_PATTERN = /^(?:0|[1-9]\d{0,11})(?:\.\d{1,12})?$/;

interface Fraction {
  numerator: bigint;
  denominator: bigint;
}

function parseRate(rate: string): Fraction {
  if (!FX_RATE_PATTERN.test(rate)) throw new RangeError(`Not a valid FX rate: ${rate}`);
  const [whole = '0', fraction = ''] = rate.split('.');
  const numerator = BigInt(whole + fraction);
  if (numerator === 0n) throw new RangeError('An FX rate must be greater than zero');
  return { numerator, denominator: 10n ** BigInt(fraction.length) };
}

export function isValidFxRate(rate: string): boolean {
  try {
    parseRate(rate);
    return true;
  } catch {
    return false;
  }
}

export type FxRates = ReadonlyMap<string, string>;

/**
 * Converts an amount in `from` minor units into `to` minor units through the per-USD rates.
 * Returns null when either currency has no rate.
 */
export function convertMinorUnits(amount: bigint | number, from: string, to: string, rates: FxRates): bigint | null {
  const value = BigInt(amount);
  if (from === to) return value;
  const fromRate = rates.get(from);
  const toRate = rates.get(to);
  if (fromRate === undefined || toRate === undefined) return null;
  const source = parseRate(fromRate);
  const target = parseRate(toRate);
  // amount / 10^eFrom / rateFrom * rateTo * 10^eTo, kept as one fraction.
  const numerator = value * 10n ** BigInt(minorUnitExponent(to)) * target.numerator * source.denominator;
  const denominator = 10n ** BigInt(minorUnitExponent(from)) * target.denominator * source.numerator;
  return roundHalfUp(numerator, denominator);
}

function roundHalfUp(numerator: bigint, denominator: bigint): bigint {
  const negative = numerator < 0n;
  const magnitude = negative ? -numerator : numerator;
  const rounded = (2n * magnitude + denominator) / (2n * denominator);
  return negative ? -rounded : rounded;
}

/** The built-in rates overlaid with the operator's. */
export function mergeFxRates(overrides: Iterable<readonly [string, string]>): FxRates {
  return new Map([...Object.entries(DEFAULT_FX_RATES_PER_USD), ...overrides]);
}
