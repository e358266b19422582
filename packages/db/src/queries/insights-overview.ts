import {
  CANCEL_OUTCOMES,
  DECLINE_CATEGORIES,
  invalidParam,
  roundedRatio,
  toIsoMillis,
  type FxRates,
} from '@retention/core';
import type { Db, Transaction } from '../connection.js';
import {
  OVERVIEW_PERIODS,
  type DeclineCategoryTotals,
  type DeclineCodeTotals,
  type ExchangeRate,
  type MonthlyCampaigns,
  type MonthlySessions,
  type Overview,
  type OverviewPeriod,
} from '../dashboard-views.js';
import { closedInPeriod } from './closed-in-period.js';
import { loadFxTable } from './fx-rates.js';
import { DAY_RANGE, MoneyTotals, rollupAmounts, statsWithWorkingsInSnapshot } from './stats.js';

/**
 * The dashboard overview: the KPIs of a period and the series behind its charts, all from the
 * rollups (0006 for all time, 0012's day buckets otherwise), in one REPEATABLE READ READ ONLY
 * snapshot. Periods are whole UTC days ending today:
 * - `last_30_days` / `last_90_days`: today and the 29 / 89 UTC days before it;
 * - `last_12_months`: the current UTC month and the 11 before it;
 * - `this_month`: the current UTC calendar month so far; `last_month`: the whole UTC month before
 *   it (the one period with an end, `until`). Calendar months of UTC days, as the monthly charts
 *   and the day rollups count them, so "Last month" is the chart's last-but-one bar number for
 *   number (docs/dashboard-api.md, "Overview", on why not the viewer's zone);
 * - `custom`: the UTC days `from` to `to`, both included (`until` the day after `to`);
 * - `all_time`: everything; its `stats` is GET /api/v1/stats number for number (same function).
 * A campaign belongs to the period it opened in (its `first_failed_at`), a cancel session to the
 * one it started in (`created_at`): a cohort view, so a rate never mixes denominators. Beside it,
 * and only there, `closed_in_period` counts the campaigns that closed in the period (0045's
 * rollup by `closed_at` day), whenever they opened.
 * The monthly series always cover the last 12 UTC months, oldest first.
 */

/** A custom period's days: `from` to `to`, both UTC days (`YYYY-MM-DD`) and both included. */
export interface OverviewRange {
  from: string;
  to: string;
}

const DAY_PATTERN = /^\d{4}-\d{2}-\d{2}$/;

/** A real calendar day written `YYYY-MM-DD` (not 2026-02-30). */
function isDay(value: unknown): value is string {
  return typeof value === 'string' && DAY_PATTERN.test(value) && utcDay(new Date(`${value}T00:00:00Z`)) === value;
}

/**
 * The days of `period=custom` (`from` and `to`, both included), or undefined for any other
 * period, which takes neither.
 */
export function parseOverviewRange(period: OverviewPeriod, from: unknown, to: unknown): OverviewRange | undefined {
  if (period !== 'custom') {
    if (from !== undefined || to !== undefined) throw invalidParam('from and to are for period=custom only');
    return undefined;
  }
  if (!isDay(from) || !isDay(to)) throw invalidParam('period=custom needs from and to, each a day as YYYY-MM-DD');
  if (from > to) throw invalidParam('from must be on or before to');
  return { from, to };
}

export function parseOverviewPeriod(value: unknown): OverviewPeriod {
  if (value === undefined) return 'last_30_days';
  if (typeof value === 'string' && (OVERVIEW_PERIODS as readonly string[]).includes(value))
    return value as OverviewPeriod;
  throw invalidParam(`period must be one of ${OVERVIEW_PERIODS.join(', ')}`);
}

function utcDay(date: Date): string {
  return date.toISOString().slice(0, 10);
}

/** The first day of the UTC month `offset` months from `now`'s. */
function monthStart(now: Date, offset: number): string {
  return utcDay(new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + offset, 1)));
}

/** The UTC day `period` ends before: the first of this month for last month, the day after a custom range's last, else null (up to now). */
function periodEnd(period: OverviewPeriod, now: Date, range?: OverviewRange): string | null {
  if (period === 'custom') return utcDay(new Date(Date.parse(`${range!.to}T00:00:00Z`) + 86_400_000));
  return period === 'last_month' ? monthStart(now, 0) : null;
}

/** The first UTC day of `period`, or null for all time. */
export function periodStart(period: OverviewPeriod, now: Date, range?: OverviewRange): string | null {
  const day = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
  switch (period) {
    case 'custom':
      return range!.from;
    case 'this_month':
      return monthStart(now, 0);
    case 'last_month':
      return monthStart(now, -1);
    case 'last_30_days':
      return utcDay(new Date(day - 29 * 86_400_000));
    case 'last_90_days':
      return utcDay(new Date(day - 89 * 86_400_000));
    case 'last_12_months':
      return monthStart(now, -11);
    case 'all_time':
      return null;
  }
}

export async function computeOverview(
  db: Db,
  workspaceId: string,
  period: OverviewPeriod,
  now = new Date(),
  /** The days of `custom` (parseOverviewRange). */
  range?: OverviewRange,
) {
  if ((period === 'custom') !== (range !== undefined))
    throw invalidParam('period=custom needs from and to, and only it');
  return db.transaction((trx) => overviewInSnapshot(trx, workspaceId, period, now, range), {
    isolationLevel: 'repeatable read',
    readOnly: true,
  });
}

async function overviewInSnapshot(
  trx: Transaction,
  workspaceId: string,
  period: OverviewPeriod,
  now: Date,
  range: OverviewRange | undefined,
): Promise<Overview> {
  const since = periodStart(period, now, range);
  const until = periodEnd(period, now, range);
  // One read of the FX table for the KPIs and the monthly totals (each keeps its own tally).
  const { rates, setAt } = await loadFxTable(trx);
  const { stats, money: statsMoney } = await statsWithWorkingsInSnapshot(trx, workspaceId, now, since, rates, until);
  const months = lastTwelveMonths(now);
  const money = new MoneyTotals(stats.display_currency, rates);
  const campaignsByMonth = await monthlyCampaigns(trx, workspaceId, months, money);
  const sessionsByMonth = await monthlySessions(trx, workspaceId, months);
  const reasons = await cancelReasons(trx, workspaceId, since, until);
  const codeRows = await declineCodeRows(trx, workspaceId, since, until);
  const codes = topDeclineCodes(codeRows, money);
  const closed = await closedInPeriod(trx, workspaceId, since, until, money);
  const unconverted = new Set([...stats.unconverted_currencies, ...money.unconverted]);
  const converted = new Set([...statsMoney.converted, ...money.converted]);
  return {
    object: 'overview',
    period,
    since,
    until,
    stats,
    closed_in_period: closed,
    decline_categories: declineCategories(stats.recovery.by_decline_category, categoryAmounts(codeRows, money)),
    decline_codes: codes.top,
    other_decline_codes: codes.others,
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

/** The current UTC month and the 11 before it, oldest first, as `YYYY-MM`. */
function lastTwelveMonths(now: Date): string[] {
  return Array.from({ length: 12 }, (_, index) => monthStart(now, index - 11).slice(0, 7));
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
      failed_amount_cents: money.total(rollupAmounts(inMonth)),
      recovered_amount_cents: money.total(rollupAmounts(inMonth.filter((row) => row.status === 'recovered'))),
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

async function cancelReasons(trx: Transaction, workspaceId: string, since: string | null, until: string | null) {
  const { rows } = await trx.raw<{ rows: Array<{ reason_code: string; sessions: number }> }>(
    `SELECT reason_code, sum(sessions)::integer AS sessions
       FROM cancel_session_day_rollups WHERE workspace_id = ? AND ${DAY_RANGE}
      GROUP BY 1 HAVING sum(sessions) <> 0 ORDER BY 2 DESC, 1`,
    [workspaceId, since ?? '-infinity', until],
  );
  return rows;
}

/** Each decline category's money in the display currency: of every campaign that failed, of the recovered ones. */
type CategoryAmounts = Record<string, { failed_amount_cents: number; recovered_amount_cents: number } | undefined>;

/** The stats' counts per decline category with their money, in DECLINE_CATEGORIES' order. */
function declineCategories(
  counts: Record<string, { opened: number; recovered: number } | undefined>,
  amounts: CategoryAmounts,
): DeclineCategoryTotals[] {
  return DECLINE_CATEGORIES.map((category) => ({
    decline_category: category,
    opened: counts[category]?.opened ?? 0,
    recovered: counts[category]?.recovered ?? 0,
    failed_amount_cents: amounts[category]?.failed_amount_cents ?? 0,
    recovered_amount_cents: amounts[category]?.recovered_amount_cents ?? 0,
  }));
}

/** How many decline codes the overview names one by one; the rest are summed in `other_decline_codes`. */
const DECLINE_CODE_LIMIT = 8;

/** The period's campaigns per decline code, category, status and currency (0044's rollup). */
interface DeclineCodeRow {
  decline_code: string;
  decline_category: string;
  status: string;
  currency: string;
  campaigns: number;
  /** A bigint sum, read as text. */
  amount_cents: string;
}

/**
 * The period's rows of 0044's rollup, which counts every campaign (each has a decline code)
 * under the category it was sorted into: the decline codes and the categories' money both come
 * from them, so GET /api/v1/stats sums no money it does not answer.
 */
async function declineCodeRows(
  trx: Transaction,
  workspaceId: string,
  since: string | null,
  until: string | null,
): Promise<DeclineCodeRow[]> {
  const { rows } = await trx.raw<{ rows: DeclineCodeRow[] }>(
    `SELECT decline_code, decline_category, status, currency, sum(campaigns)::integer AS campaigns,
            sum(amount_cents)::text AS amount_cents
       FROM decline_code_day_rollups WHERE workspace_id = ? AND ${DAY_RANGE}
      GROUP BY 1, 2, 3, 4 HAVING sum(campaigns) <> 0`,
    [workspaceId, since ?? '-infinity', until],
  );
  return rows;
}

/** Each category's money, converted as the KPIs' is: of all its campaigns, of its recovered ones. */
function categoryAmounts(rows: readonly DeclineCodeRow[], money: MoneyTotals): CategoryAmounts {
  const byCategory = new Map<string, DeclineCodeRow[]>();
  for (const row of rows) {
    const categoryRows = byCategory.get(row.decline_category);
    if (categoryRows) categoryRows.push(row);
    else byCategory.set(row.decline_category, [row]);
  }
  return Object.fromEntries(
    [...byCategory].map(([category, categoryRows]) => [
      category,
      {
        failed_amount_cents: money.total(rollupAmounts(categoryRows)),
        recovered_amount_cents: money.total(rollupAmounts(categoryRows.filter((row) => row.status === 'recovered'))),
      },
    ]),
  );
}

/**
 * The period's decline codes: the DECLINE_CODE_LIMIT with the most campaigns (then the most
 * money, then by name), each with its money converted as the KPIs' is, and what the rest add up
 * to. A code is counted under the category it was sorted into.
 */
function topDeclineCodes(
  rows: readonly DeclineCodeRow[],
  money: MoneyTotals,
): { top: DeclineCodeTotals[]; others: Overview['other_decline_codes'] } {
  const byCode = new Map<string, { rows: DeclineCodeRow[]; opened: number; recovered: number }>();
  for (const row of rows) {
    const key = `${row.decline_category}\u0000${row.decline_code}`;
    const code = byCode.get(key) ?? { rows: [], opened: 0, recovered: 0 };
    code.rows.push(row);
    code.opened += row.campaigns;
    if (row.status === 'recovered') code.recovered += row.campaigns;
    byCode.set(key, code);
  }
  const totals = [...byCode.values()]
    .map(({ rows: codeRows, opened, recovered }): DeclineCodeTotals => ({
      decline_code: codeRows[0]!.decline_code,
      decline_category: codeRows[0]!.decline_category,
      opened,
      recovered,
      failed_amount_cents: money.total(rollupAmounts(codeRows)),
      recovered_amount_cents: money.total(rollupAmounts(codeRows.filter((row) => row.status === 'recovered'))),
    }))
    .sort(
      (a, b) =>
        b.opened - a.opened ||
        b.failed_amount_cents - a.failed_amount_cents ||
        a.decline_code.localeCompare(b.decline_code) ||
        a.decline_category.localeCompare(b.decline_category),
    );
  const rest = totals.slice(DECLINE_CODE_LIMIT);
  return {
    top: totals.slice(0, DECLINE_CODE_LIMIT),
    others: {
      codes: rest.length,
      opened: rest.reduce((sum, code) => sum + code.opened, 0),
      failed_amount_cents: rest.reduce((sum, code) => sum + code.failed_amount_cents, 0),
    },
  };
}
