import type { Transaction } from '../connection.js';
import type { ClosedInPeriod } from '../dashboard-views.js';
import { DAY_RANGE, rollupAmounts, type MoneyTotals } from './stats.js';

/**
 * The overview's `closed_in_period`: the campaigns recovered, and lost or abandoned, on the
 * period's UTC days, read from 0045's rollup by closing day (a few rows per day), whenever they
 * opened. The overview's other figures count the period's cohort (by opening day); this counts
 * what happened in it, for "how much did we recover in November?" (docs/dashboard-api.md,
 * "Overview"). Money is converted by the overview's own MoneyTotals, so a currency without a rate
 * is listed in its `unconverted_currencies` and its rates in `exchange_rates`.
 */
export async function closedInPeriod(
  trx: Transaction,
  workspaceId: string,
  since: string | null,
  until: string | null,
  money: MoneyTotals,
): Promise<ClosedInPeriod> {
  const { rows } = await trx.raw<{
    rows: Array<{ status: string; currency: string; campaigns: number; amount_cents: string }>;
  }>(
    `SELECT status, currency, sum(campaigns)::integer AS campaigns, sum(amount_cents)::text AS amount_cents
       FROM campaign_close_day_rollups WHERE workspace_id = ? AND ${DAY_RANGE}
      GROUP BY 1, 2 HAVING sum(campaigns) <> 0`,
    [workspaceId, since ?? '-infinity', until],
  );
  const recovered = rows.filter((row) => row.status === 'recovered');
  // Lost and abandoned alike: money not won back, as the stats' `lost_amount_cents`.
  const lost = rows.filter((row) => row.status !== 'recovered');
  const count = (of: typeof rows) => of.reduce((sum, row) => sum + row.campaigns, 0);
  return {
    recovered: count(recovered),
    recovered_amount_cents: money.total(rollupAmounts(recovered)),
    lost: count(lost),
    lost_amount_cents: money.total(rollupAmounts(lost)),
  };
}
