import { CANCEL_OUTCOMES, invalidParam, roundedRatio, toIsoMillis, type FxRates } from '@retention/core';
import type { Db, Transaction } from '../connection.js';
import {
  OVERVIEW_PERIODS,
  type ExchangeRate,
  type MonthlyCampaigns,
  type MonthlySessions,
  type Overview,
  type OverviewPeriod,
} from '../dashboard-views.js';
import { loadFxTable } from './fx-rates.js';
import { MoneyTotals, statsWithWorkingsInSnapshot } from './stats.js';

/**
 * The dashboard overview: the KPIs of a period and the series behind its charts, all from the
 * rollups (0006 for all time, 0012's day buckets otherwise), in one REPEATABLE READ READ ONLY
 * snapshot. Periods are whole UTC days ending today:
 * - `last_30_days` / `last_90_days`: today and the 29 / 89 UTC days before it;
 * - `last_12_months`: the current UTC month and the 11 before it;
 * - `all_time`: everything; its `stats` is GET /api/v1/stats number for number (same function).
 * A campaign belongs to the period it opened in (its `first_failed_at`), a cancel session to the
 * one it started in (`created_at`): a cohort view, so a rate never mixes denominators.
 * The monthly series always cover the last 12 UTC months, oldest first.
 */

export function parseOverviewPeriod(value: unknown): OverviewPeriod {
  if (value === undefined) return 'last_30_days';
  if (typeof value === 'string' && (OVERVIEW_PERIODS as readonly string[]).includes(value))
    return value as OverviewPeriod;
  throw invalidParam(`period must be one of ${OVERVIEW_PERIODS.join(', ')}`);
}

function utcDay(date: Date): string {
  return date.toISOString().slice(0, 10);
}

/** The first UTC day of `period`, or null for all time. */
export function periodStart(period: OverviewPeriod, now: Date): string | null {
  const day = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
  switch (period) {
    case 'last_30_days':
      return utcDay(new Date(day - 29 * 86_400_000));
    case 'last_90_days':
      return utcDay(new Date(day - 89 * 86_400_000));
    case 'last_12_months':
      return utcDay(new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 11, 1)));
    case 'all_time':
      return null;
  }
}

export async function computeOverview(db: Db, workspaceId: string, period: OverviewPeriod, now = new Date()) {
  return db.transaction((trx) => overviewInSnapshot(trx, workspaceId, period, now), {
    isolationLevel: 'repeatable read',
    readOnly: true,
  });
}

async function overviewInSnapshot(
  trx: Transaction,
  workspaceId: string,
  period: OverviewPeriod,
  now: Date,
): Promise<Overview> {
  const since = periodStart(period, now);
  // One read of the FX table for the KPIs and the monthly totals (each keeps its own tally).
  const { rates, setAt } = await loadFxTable(trx);
  const { stats, money: statsMoney } = await statsWithWorkingsInSnapshot(trx, workspaceId, now, since, rates);
  const months = lastTwelveMonths(now);
  const money = new MoneyTotals(stats.display_currency, rates);
  const campaignsByMonth = await monthlyCampaigns(trx, workspaceId, months, money);
  const sessionsByMonth = await monthlySessions(trx, workspaceId, months);
  const reasons = await cancelReasons(trx, workspaceId, since);
  const unconverted = new Set([...stats.unconverted_currencies, ...money.unconverted]);
  const converted = new Set([...statsMoney.converted, ...money.converted]);
  return {
    object: 'overview',
    period,
    since,
    stats,
    exchange_rates: ratesUsed(converted, stats.display_currency, rates, setAt),
    campaigns_by_month: campaignsByMonth,
    cancel_sessions_by_month: sessionsByMonth,
    cancel_reasons: reasons,
    unconverted_currencies: [...unconverted].sort(),
    generated_at: toIsoMillis(now),
  };
}

/**
 * The rates the overview's money was converted with: of each currency it converted and of the
 * display currency (a conversion goes through the US dollar, whose rate is 1 by definition and
 * so not listed), each with when the operator set it, or null for the shipped default. None when
 * nothing was converted.
 */
function ratesUsed(
  converted: ReadonlySet<string>,
  displayCurrency: string,
  rates: FxRates,
  setAt: ReadonlyMap<string, Date>,
): ExchangeRate[] {
  if (converted.size === 0) return [];
  return [...new Set([...converted, displayCurrency])]
    .filter((currency) => currency !== 'usd')
    .sort()
    .map((currency) => {
      const set = setAt.get(currency);
      return { currency, per_usd: rates.get(currency)!, set_at: set ? toIsoMillis(set) : null };
    });
}

/**
 * A day rollup's UTC month: grouped by the month's first instant as a plain timestamp, then
 * written `YYYY-MM` once per group. (to_char of the date itself would convert every row to a
 * timestamptz in the session's zone and format it: about twice the cost of the whole query.)
 */
const MONTH_START = "date_trunc('month', day::timestamp)";
const MONTH_OF_DAY = `to_char(${MONTH_START}, 'YYYY-MM')`;

function lastTwelveMonths(now: Date): string[] {
  return Array.from({ length: 12 }, (_, index) =>
    new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 11 + index, 1)).toISOString().slice(0, 7),
  );
}

async function monthlyCampaigns(
  trx: Transaction,
  workspaceId: string,
  months: string[],
  money: MoneyTotals,
): Promise<MonthlyCampaigns[]> {
  const { rows } = await trx.raw<{
    rows: Array<{ month: string; status: string; currency: string; campaigns: number; amount_cents: string }>;
  }>(
    `SELECT ${MONTH_OF_DAY} AS month, status, currency, sum(campaigns)::integer AS campaigns,
            sum(amount_cents)::text AS amount_cents
       FROM campaign_day_rollups WHERE workspace_id = ? AND day >= ?::date
      GROUP BY ${MONTH_START}, status, currency HAVING sum(campaigns) <> 0`,
    [workspaceId, `${months[0]}-01`],
  );
  return months.map((month) => {
    const inMonth = rows.filter((row) => row.month === month);
    const amounts = (rows: typeof inMonth) =>
      rows.map((row) => ({ currency: row.currency, amount: BigInt(row.amount_cents) }));
    const count = (status?: string) =>
      inMonth
        .filter((row) => status === undefined || row.status === status)
        .reduce((sum, row) => sum + row.campaigns, 0);
    const recovered = count('recovered');
    const closed = recovered + count('lost') + count('abandoned');
    return {
      month,
      opened: count(),
      recovered,
      failed_amount_cents: money.total(amounts(inMonth)),
      recovered_amount_cents: money.total(amounts(inMonth.filter((row) => row.status === 'recovered'))),
      closed,
      recovery_rate: closed === 0 ? null : roundedRatio(recovered, closed, 4),
    };
  });
}

async function monthlySessions(trx: Transaction, workspaceId: string, months: string[]): Promise<MonthlySessions[]> {
  const { rows } = await trx.raw<{ rows: Array<{ month: string; outcome: string; sessions: number }> }>(
    `SELECT ${MONTH_OF_DAY} AS month, outcome, sum(sessions)::integer AS sessions
       FROM cancel_session_day_rollups WHERE workspace_id = ? AND day >= ?::date
      GROUP BY ${MONTH_START}, outcome HAVING sum(sessions) <> 0`,
    [workspaceId, `${months[0]}-01`],
  );
  return months.map((month) => {
    const byOutcome = Object.fromEntries(
      CANCEL_OUTCOMES.map((outcome) => [outcome, 0]),
    ) as MonthlySessions['by_outcome'];
    for (const row of rows) if (row.month === month) byOutcome[row.outcome as keyof typeof byOutcome] += row.sessions;
    return { month, by_outcome: byOutcome };
  });
}

async function cancelReasons(trx: Transaction, workspaceId: string, since: string | null) {
  const { rows } = await trx.raw<{ rows: Array<{ reason_code: string; sessions: number }> }>(
    `SELECT reason_code, sum(sessions)::integer AS sessions
       FROM cancel_session_day_rollups WHERE workspace_id = ? AND day >= coalesce(?::date, '-infinity'::date)
      GROUP BY 1 HAVING sum(sessions) <> 0 ORDER BY 2 DESC, 1`,
    [workspaceId, since],
  );
  return rows;
}
