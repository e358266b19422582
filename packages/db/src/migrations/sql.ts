/**
 * Fragments shared by migrations. Value lists are never derived from core's enums here: each
 * migration writes its own literal list, a snapshot of the day it was written
 * (test/enum-checks.test.ts holds the live schema's lists equal to core's enums).
 */

export const CURRENCY_CHECK = (column: string) => `CHECK (${column} ~ '^[a-z]{3}$')`;
export const AMOUNT_CHECK = (column: string) => `CHECK (${column} >= 0)`;
