import { mergeFxRates, type FxRates } from '@retention/core';
import type { Queryable } from '../connection.js';

/** The FX rates the read models convert money with; the operator sets them (domain's setFxRate). */

/** Numeric values come back from Postgres as text with trailing zeros: `0.920000000000`. */
export function canonicalFxRate(text: string): string {
  return text.includes('.') ? text.replace(/0+$/, '').replace(/\.$/, '') : text;
}

/** The shipped defaults overlaid with every rate the operator set. */
export async function loadFxRates(db: Queryable): Promise<FxRates> {
  const rows = await db<{ currency: string; per_usd: string }>('fx_rates').select('currency', 'per_usd');
  return mergeFxRates(rows.map((row) => [row.currency, canonicalFxRate(row.per_usd)] as const));
}
