/**
 * `numerator / denominator` rounded half up to `places` decimals, in integer arithmetic:
 * floating point rounds exact halves such as 57/800 = 0.07125 the wrong way. Both operands are
 * non-negative integers and the denominator is positive. The stats' rates use it (4 places),
 * and the dashboard for the percentages it shows (3 places: 59.3%), from the same counts, so a
 * percentage is never a rounded rate rounded again.
 */
export function roundedRatio(numerator: number | bigint, denominator: number | bigint, places: number): number {
  const scale = 10n ** BigInt(places);
  const twice = 2n * BigInt(denominator);
  return Number((2n * BigInt(numerator) * scale + BigInt(denominator)) / twice) / Number(scale);
}
