import {
  CAMPAIGN_STATUSES,
  CANCEL_OUTCOMES,
  convertMinorUnits,
  DECLINE_CATEGORIES,
  isSavedOutcome,
  notFound,
  RECOVERED_VIA,
  roundedRatio,
  toIsoMillis,
  type CampaignStatus,
  type CancelOutcome,
  type DeclineCategory,
  type FxRates,
  type RecoveredVia,
  type Stats,
  zeroCounts,
} from '@retention/core';
import type { Db, Transaction } from '../connection.js';
import { loadFxRates } from './fx-rates.js';

/**
 * The KPIs of a workspace: GET /api/v1/stats and the dashboard both call this. It reads the
 * rollup tables (kept exact by triggers) rather than counting source rows, so its cost does
 * not grow with the number of campaigns; the median alone steps through the index entries of
 * the one or two hours of recoveries that hold it.
 *
 * - Every query runs in one REPEATABLE READ READ ONLY transaction: the counts, sums and the
 *   median come from one snapshot, never from moments on either side of a concurrent write.
 * - Rates are in 0..1, rounded half up to 4 places, null when the denominator is 0.
 * - Money is summed per currency, then each sum is converted to the display currency once
 *   (exact rational arithmetic, rounded half up) and added. Sums are read as text and added as
 *   BigInt, so no sum is refused or rounded on the way, however large. A currency with no FX
 *   rate is listed in `unconverted_currencies` and left out of the totals.
 * - `lost_amount_cents` covers `lost` and `abandoned` campaigns: both are money not won back.
 * - `has_multiple_currencies`: the campaigns and cancel sessions these stats count (all time:
 *   the workspace's; a period: that period's) use more than one currency together (any status
 *   or outcome, convertible or not): whether these totals mixed currencies.
 * - `median_days_to_recover` is the exact median, over recovered campaigns, of
 *   `recovered_at - first_failed_at` (never below zero; the mean of the middle two for an even
 *   count), in days rounded half up to 2 places.
 */

interface CampaignRollup {
  status: CampaignStatus;
  currency: string;
  decline_category: DeclineCategory;
  recovered_via: RecoveredVia | '';
  campaigns: number;
  /** A bigint column, read as text. */
  amount_cents: string;
}

interface RecoveryTimeRollup {
  hours_to_recover: number;
  campaigns: number;
}

interface CancelSessionRollup {
  outcome: CancelOutcome;
  currency: string;
  sessions: number;
  /** A bigint column, read as text. */
  mrr_cents: string;
}

interface Amount {
  currency: string;
  amount: bigint;
}

const MILLISECONDS_PER_DAY = 86_400_000;

export async function computeStats(db: Db, workspaceId: string, now = new Date()): Promise<Stats> {
  return db.transaction((trx) => statsInSnapshot(trx, workspaceId, now, null), {
    isolationLevel: 'repeatable read',
    readOnly: true,
  });
}

/**
 * The stats of `workspaceId`, over every campaign and cancel session (`since` null: the
 * all-time rollups of 0006) or over those that opened on or after the UTC day `since`
 * (YYYY-MM-DD: the day rollups of 0012). One function for both, so the overview's "all time"
 * is GET /api/v1/stats by construction. Runs in the caller's snapshot.
 */
export async function statsInSnapshot(
  trx: Transaction,
  workspaceId: string,
  now: Date,
  since: string | null,
  /** The FX table, when the caller has read it already in this snapshot. */
  rates?: FxRates,
): Promise<Stats> {
  return (await statsWithWorkingsInSnapshot(trx, workspaceId, now, since, rates)).stats;
}

/**
 * statsInSnapshot's stats, with what the overview says beside them: the totals' money (which
 * currencies it converted, whose rates the overview names).
 */
export async function statsWithWorkingsInSnapshot(
  trx: Transaction,
  workspaceId: string,
  now: Date,
  since: string | null,
  rates?: FxRates,
  /** The UTC day the period ends before (exclusive; "last month"), or null for up to now. Only with `since`. */
  until: string | null = null,
): Promise<{ stats: Stats; money: MoneyTotals }> {
  const workspace = await trx<{ id: string; display_currency: string }>('workspaces')
    .where({ id: workspaceId })
    .first('display_currency');
  if (!workspace) throw notFound(`No workspace with id ${workspaceId}`);
  const campaigns =
    since === null ? await allTimeCampaigns(trx, workspaceId) : await campaignsSince(trx, workspaceId, since, until);
  const sessions =
    since === null ? await allTimeSessions(trx, workspaceId) : await sessionsSince(trx, workspaceId, since, until);
  const medianDaysToRecover = await medianRecoveryDays(trx, workspaceId, since, until);
  const money = new MoneyTotals(workspace.display_currency, rates ?? (await loadFxRates(trx)));
  const recovery = summarizeCampaigns(campaigns, money);
  const cancelFlow = summarizeSessions(sessions, money);
  const stats: Stats = {
    object: 'stats',
    display_currency: workspace.display_currency,
    has_multiple_currencies: money.currenciesSeen.size > 1,
    unconverted_currencies: [...money.unconverted].sort(),
    recovery: { ...recovery, median_days_to_recover: medianDaysToRecover },
    cancel_flow: cancelFlow,
    generated_at: toIsoMillis(now),
  };
  return { stats, money };
}

async function allTimeCampaigns(trx: Transaction, workspaceId: string): Promise<CampaignRollup[]> {
  return trx('campaign_rollups')
    .where({ workspace_id: workspaceId })
    .whereNot({ campaigns: 0 })
    .select('status', 'currency', 'decline_category', 'recovered_via', 'campaigns', trx.raw('amount_cents::text'));
}

/** The day rollups' condition for the UTC days from `since` up to, not including, `until` (none: up to now). */
export const DAY_RANGE = "day >= ?::date AND day < coalesce(?::date, 'infinity'::date)";

async function campaignsSince(
  trx: Transaction,
  workspaceId: string,
  since: string,
  until: string | null,
): Promise<CampaignRollup[]> {
  const { rows } = await trx.raw<{ rows: CampaignRollup[] }>(
    `SELECT status, currency, decline_category, recovered_via, sum(campaigns)::integer AS campaigns,
            sum(amount_cents)::text AS amount_cents
       FROM campaign_day_rollups WHERE workspace_id = ? AND ${DAY_RANGE}
      GROUP BY 1, 2, 3, 4 HAVING sum(campaigns) <> 0`,
    [workspaceId, since, until],
  );
  return rows;
}

async function allTimeSessions(trx: Transaction, workspaceId: string): Promise<CancelSessionRollup[]> {
  return trx('cancel_session_rollups')
    .where({ workspace_id: workspaceId })
    .whereNot({ sessions: 0 })
    .select('outcome', 'currency', 'sessions', trx.raw('mrr_cents::text'));
}

async function sessionsSince(
  trx: Transaction,
  workspaceId: string,
  since: string,
  until: string | null,
): Promise<CancelSessionRollup[]> {
  const { rows } = await trx.raw<{ rows: CancelSessionRollup[] }>(
    `SELECT outcome, currency, sum(sessions)::integer AS sessions, sum(mrr_cents)::text AS mrr_cents
       FROM cancel_session_day_rollups WHERE workspace_id = ? AND ${DAY_RANGE}
      GROUP BY 1, 2 HAVING sum(sessions) <> 0`,
    [workspaceId, since, until],
  );
  return rows;
}

/** Rollup rows' money (a bigint sum read as text) as the amounts MoneyTotals.total adds up. */
export function rollupAmounts(rows: ReadonlyArray<{ currency: string; amount_cents: string }>): Amount[] {
  return rows.map((row) => ({ currency: row.currency, amount: BigInt(row.amount_cents) }));
}

/** Sums amounts per currency and converts each sum to the display currency. */
export class MoneyTotals {
  readonly currenciesSeen = new Set<string>();
  readonly unconverted = new Set<string>();
  /** The currencies other than the display currency that a total converted (at a rate it had). */
  readonly converted = new Set<string>();

  constructor(
    private readonly displayCurrency: string,
    private readonly rates: FxRates,
  ) {}

  /**
   * The exact total in the display currency. A JSON number holds integers exactly up to 2^53;
   * a larger total (no real workspace comes near) is answered as the nearest one.
   */
  total(amounts: Amount[]): number {
    const perCurrency = new Map<string, bigint>();
    for (const { currency, amount } of amounts) {
      perCurrency.set(currency, (perCurrency.get(currency) ?? 0n) + amount);
    }
    let total = 0n;
    for (const [currency, amount] of perCurrency) {
      const converted = convertMinorUnits(amount, currency, this.displayCurrency, this.rates);
      if (converted === null) this.unconverted.add(currency);
      else {
        if (currency !== this.displayCurrency) this.converted.add(currency);
        total += converted;
      }
    }
    return Number(total);
  }

  see(currency: string): void {
    this.currenciesSeen.add(currency);
  }
}

function rate(numerator: number, denominator: number): number | null {
  return denominator === 0 ? null : roundedRatio(numerator, denominator, 4);
}

function summarizeCampaigns(rows: CampaignRollup[], money: MoneyTotals) {
  const byStatus = zeroCounts(CAMPAIGN_STATUSES);
  const recoveredVia = zeroCounts(RECOVERED_VIA);
  const byDeclineCategory = Object.fromEntries(
    DECLINE_CATEGORIES.map((category) => [category, { opened: 0, recovered: 0 }]),
  ) as Record<DeclineCategory, { opened: number; recovered: number }>;
  const amounts: Record<'recovered' | 'in_flight' | 'lost', Amount[]> = { recovered: [], in_flight: [], lost: [] };

  for (const row of rows) {
    money.see(row.currency);
    byStatus[row.status] += row.campaigns;
    byDeclineCategory[row.decline_category].opened += row.campaigns;
    if (row.status === 'recovered') {
      byDeclineCategory[row.decline_category].recovered += row.campaigns;
      if (row.recovered_via) recoveredVia[row.recovered_via] += row.campaigns;
    }
    const bucket = row.status === 'abandoned' ? 'lost' : row.status;
    amounts[bucket].push({ currency: row.currency, amount: BigInt(row.amount_cents) });
  }

  const opened = byStatus.in_flight + byStatus.recovered + byStatus.lost + byStatus.abandoned;
  const closed = byStatus.recovered + byStatus.lost + byStatus.abandoned;
  return {
    opened,
    ...byStatus,
    recovery_rate: rate(byStatus.recovered, closed),
    gross_recovery_rate: rate(byStatus.recovered, opened),
    recovered_amount_cents: money.total(amounts.recovered),
    at_risk_amount_cents: money.total(amounts.in_flight),
    lost_amount_cents: money.total(amounts.lost),
    recovered_via: recoveredVia,
    by_decline_category: byDeclineCategory,
  };
}

function summarizeSessions(rows: CancelSessionRollup[], money: MoneyTotals) {
  const byOutcome = zeroCounts(CANCEL_OUTCOMES);
  const savedMrr: Amount[] = [];
  for (const row of rows) {
    money.see(row.currency);
    byOutcome[row.outcome] += row.sessions;
    if (isSavedOutcome(row.outcome)) savedMrr.push({ currency: row.currency, amount: BigInt(row.mrr_cents) });
  }
  const saved = byOutcome.saved_discount + byOutcome.saved_pause + byOutcome.saved_downgrade + byOutcome.saved_other;
  const sessions = CANCEL_OUTCOMES.reduce((sum, outcome) => sum + byOutcome[outcome], 0);
  return {
    sessions,
    saved,
    canceled: byOutcome.canceled,
    abandoned: byOutcome.abandoned,
    save_rate: rate(saved, saved + byOutcome.canceled),
    by_outcome: byOutcome,
    saved_mrr_cents: money.total(savedMrr),
  };
}

/**
 * The exact median time to recover, in days with 2 decimals; null with no recoveries.
 * `recovery_time_rollups` counts recovered campaigns per whole hour, which names the hour
 * holding each middle rank; the campaigns of that hour are then read through an index in
 * order of their exact duration (migration 0007), skipping to the rank. Whole hours are a
 * monotonic function of the duration, so the rank within the hour is the rank overall.
 */
async function medianRecoveryDays(
  trx: Transaction,
  workspaceId: string,
  since: string | null,
  until: string | null,
): Promise<number | null> {
  const hours: RecoveryTimeRollup[] =
    since === null
      ? await trx('recovery_time_rollups')
          .where({ workspace_id: workspaceId })
          .where('campaigns', '>', 0)
          .orderBy('hours_to_recover')
          .select('hours_to_recover', 'campaigns')
      : (
          await trx.raw<{ rows: RecoveryTimeRollup[] }>(
            `SELECT hours_to_recover, sum(campaigns)::integer AS campaigns
               FROM recovery_time_day_rollups WHERE workspace_id = ? AND ${DAY_RANGE}
              GROUP BY 1 HAVING sum(campaigns) > 0 ORDER BY 1`,
            [workspaceId, since, until],
          )
        ).rows;
  const total = hours.reduce((sum, row) => sum + row.campaigns, 0);
  if (total === 0) return null;
  // 1-based ranks of the middle one, or the middle two.
  const ranks = total % 2 === 1 ? [(total + 1) / 2] : [total / 2, total / 2 + 1];
  let sum = 0n;
  for (const rank of ranks) sum += BigInt(await durationAtRank(trx, workspaceId, hours, rank, since, until));
  return roundedRatio(sum, BigInt(ranks.length * MILLISECONDS_PER_DAY), 2);
}

/** The duration in milliseconds (never negative) of the recovered campaign at `rank`, 1-based. */
async function durationAtRank(
  trx: Transaction,
  workspaceId: string,
  hours: RecoveryTimeRollup[],
  rank: number,
  since: string | null,
  until: string | null,
): Promise<number> {
  let below = 0; // recovered campaigns in the hours before this one
  for (const { hours_to_recover: hour, campaigns } of hours) {
    if (below + campaigns >= rank) {
      // Step in from whichever end of the hour is nearer: at most half of its campaigns.
      const fromShortest = rank - below - 1;
      const fromLongest = below + campaigns - rank;
      const row = await trx('recovery_campaigns')
        .where({ workspace_id: workspaceId, status: 'recovered' })
        .whereRaw('hours_between(first_failed_at, recovered_at) = ?', [hour])
        .modify((query) => {
          // The period's campaigns opened on or after UTC midnight of `since`, as the day rollups bucket them.
          if (since !== null) query.whereRaw(`first_failed_at >= (?::date)::timestamp AT TIME ZONE 'UTC'`, [since]);
          if (until !== null) query.whereRaw(`first_failed_at < (?::date)::timestamp AT TIME ZONE 'UTC'`, [until]);
        })
        .orderByRaw(`recovered_at - first_failed_at ${fromShortest <= fromLongest ? 'ASC' : 'DESC'}`)
        .offset(Math.min(fromShortest, fromLongest))
        .first<{ milliseconds: number } | undefined>(
          trx.raw('greatest(0, extract(epoch FROM recovered_at - first_failed_at) * 1000)::bigint AS milliseconds'),
        );
      if (row) return row.milliseconds;
      break;
    }
    below += campaigns;
  }
  throw new Error(`recovery_time_rollups disagrees with recovery_campaigns in workspace ${workspaceId}`);
}
