import { mergeFxRates, type FxRates } from '@retention/core';
import type { Queryable } from '../connection.js';

/** The FX rates the read models convert money with; the operator sets them (domain's setFxRate). */

/** Numeric values come back from Postgres as text with trailing zeros: `0.920000000000`. */
export function canonicalFxRate(text: string): string {
  return text.includes('.') ? text.replace(/0+$/, '').replace(/\.$/, '') : text;
}

/** The shipped defaults overlaid with every rate the operator set. */
export async function loadFxRates(db: Queryable): Promise<FxRates> {
  return (await loadFxTable(db)).rates;
}

/**
 * The same, and when the operator set each of their rates (`updated_at`, the last `fx set`):
 * a currency not in `setAt` converts at the shipped default, which has no date.
 */
export async function loadFxTable(db: Queryable): Promise<{ rates: FxRates; setAt: ReadonlyMap<string, Date> }> {
  const rows = await db<{ currency: string; per_usd: string; updated_at: Date }>('fx_rates').select(
    'currency',
    'per_usd',
    'updated_at',
  );
  return {
    rates: mergeFxRates(rows.map((row) => [row.currency, canonicalFxRate(row.per_usd)] as const)),
    setAt: new Map(rows.map((row) => [row.currency, row.updated_at])),
  };
}
