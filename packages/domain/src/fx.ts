import { Type } from '@sinclair/typebox';
import { Currency, FX_RATE_PATTERN, invalidField, isValidFxRate, toIsoMillis } from '@retention/core';
import { canonicalFxRate, type Db } from '@retention/db';
import { inputValidator } from './validate.js';

export interface FxRate {
  object: 'fx_rate';
  currency: string;
  per_usd: string;
  updated_at: string;
}

const validateRate = inputValidator(
  Type.Object(
    {
      currency: Currency(),
      per_usd: Type.String({
        pattern: FX_RATE_PATTERN.source,
        errorMessage: 'must be a positive decimal such as 0.92 or 150 (up to 12 digits on each side of the point)',
      }),
    },
    { additionalProperties: false },
  ),
);

export async function setFxRate(db: Db, input: { currency: string; per_usd: string }): Promise<FxRate> {
  const valid = validateRate(input);
  if (!isValidFxRate(valid.per_usd)) throw invalidField('per_usd', 'must be a positive decimal such as 0.92 or 150');
  if (valid.currency === 'usd' && canonicalFxRate(valid.per_usd) !== '1') {
    throw invalidField('per_usd', 'the rate of usd is 1 by definition');
  }
  const [row] = await db<{ currency: string; per_usd: string; updated_at: Date }>('fx_rates')
    .insert({ currency: valid.currency, per_usd: valid.per_usd, updated_at: db.fn.now() })
    .onConflict('currency')
    .merge(['per_usd', 'updated_at'])
    .returning(['currency', 'per_usd', 'updated_at']);
  const saved = row!;
  return {
    object: 'fx_rate',
    currency: saved.currency,
    per_usd: canonicalFxRate(saved.per_usd),
    updated_at: toIsoMillis(saved.updated_at),
  };
}
