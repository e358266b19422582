/** Helpers for writing migration SQL from the enumerations in core. */

/** `'a', 'b', 'c'`: values are compile-time constants from core, never user input. */
export function sqlList(values: readonly string[]): string {
  return values.map((value) => `'${value.replaceAll("'", "''")}'`).join(', ');
}

export const CURRENCY_CHECK = (column: string) => `CHECK (${column} ~ '^[a-z]{3}$')`;
export const AMOUNT_CHECK = (column: string) => `CHECK (${column} >= 0)`;
