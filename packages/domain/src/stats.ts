import {
  CANCEL_OUTCOMES,
  convertMinorUnits,
  DECLINE_CATEGORIES,
  isSavedOutcome,
  notFound,
  RECOVERED_VIA,
  toIsoMillis,
  type CampaignStatus,
  type CancelOutcome,
  type DeclineCategory,
  type FxRates,
  type RecoveredVia,
  type Stats,
} from '@retention/core';
import type { Queryable } from '@retention/db';
import { loadFxRates } from './fx.js';

/**
 * The KPIs of a workspace: GET /api/v1/stats and the dashboard both call this. It reads the
 * rollup tables (kept exact by triggers), never the source rows, so its cost does not grow
 * with the number of campaigns.
 *
 * - Rates are in 0..1, rounded to 4 places, null when the denominator is 0.
 * - Money is summed per currency, then each sum is converted to the display currency once
 *   (exact rational arithmetic, rounded half up) and added. A currency with no FX rate is
 *   listed in `unconverted_currencies` and left out of the totals.
 * - `lost_amount_cents` covers `lost` and `abandoned` campaigns: both are money not won back.
 * - `median_days_to_recover` is the median, over recovered campaigns, of the whole hours from
 *   first failure to recovery, expressed in days (hours / 24) and rounded to 2 places.
 */

interface CampaignRollup {
  status: CampaignStatus;
  currency: string;
  decline_category: DeclineCategory;
  recovered_via: RecoveredVia | '';
  campaigns: number;
  amount_cents: number;
}

interface RecoveryTimeRollup {
  hours_to_recover: number;
  campaigns: number;
}

interface CancelSessionRollup {
  outcome: CancelOutcome;
  currency: string;
  sessions: number;
  mrr_cents: number;
}

export async function computeStats(db: Queryable, workspaceId: string, now = new Date()): Promise<Stats> {
  const [workspace, campaigns, recoveryTimes, sessions, rates] = await Promise.all([
    db<{ id: string; display_currency: string }>('workspaces').where({ id: workspaceId }).first('display_currency'),
    db<CampaignRollup & { workspace_id: string }>('campaign_rollups')
      .where({ workspace_id: workspaceId })
      .whereNot({ campaigns: 0 })
      .select('status', 'currency', 'decline_category', 'recovered_via', 'campaigns', 'amount_cents'),
    db<RecoveryTimeRollup & { workspace_id: string }>('recovery_time_rollups')
      .where({ workspace_id: workspaceId })
      .where('campaigns', '>', 0)
      .orderBy('hours_to_recover')
      .select('hours_to_recover', 'campaigns'),
    db<CancelSessionRollup & { workspace_id: string }>('cancel_session_rollups')
      .where({ workspace_id: workspaceId })
      .whereNot({ sessions: 0 })
      .select('outcome', 'currency', 'sessions', 'mrr_cents'),
    loadFxRates(db),
  ]);
  if (!workspace) throw notFound(`No workspace with id ${workspaceId}`);

  const money = new MoneyTotals(workspace.display_currency, rates);
  const recovery = summarizeCampaigns(campaigns, money);
  const cancelFlow = summarizeSessions(sessions, money);
  return {
    object: 'stats',
    display_currency: workspace.display_currency,
    has_multiple_currencies: money.currenciesSeen.size > 1,
    unconverted_currencies: [...money.unconverted].sort(),
    recovery: { ...recovery, median_days_to_recover: medianDays(recoveryTimes) },
    cancel_flow: cancelFlow,
    generated_at: toIsoMillis(now),
  };
}

/** Sums amounts per currency and converts each sum to the display currency. */
class MoneyTotals {
  readonly currenciesSeen = new Set<string>();
  readonly unconverted = new Set<string>();

  constructor(
    private readonly displayCurrency: string,
    private readonly rates: FxRates,
  ) {}

  total(amounts: Array<{ currency: string; amount: number }>): number {
    const perCurrency = new Map<string, bigint>();
    for (const { currency, amount } of amounts) {
      perCurrency.set(currency, (perCurrency.get(currency) ?? 0n) + BigInt(amount));
    }
    let total = 0n;
    for (const [currency, amount] of perCurrency) {
      const converted = convertMinorUnits(amount, currency, this.displayCurrency, this.rates);
      if (converted === null) this.unconverted.add(currency);
      else total += converted;
    }
    return Number(total);
  }

  see(currency: string): void {
    this.currenciesSeen.add(currency);
  }
}

function rate(numerator: number, denominator: number): number | null {
  return denominator === 0 ? null : Math.round((numerator / denominator) * 10_000) / 10_000;
}

function zeroCounts<K extends string>(keys: readonly K[]): Record<K, number> {
  return Object.fromEntries(keys.map((key) => [key, 0])) as Record<K, number>;
}

function summarizeCampaigns(rows: CampaignRollup[], money: MoneyTotals) {
  const byStatus = zeroCounts(['in_flight', 'recovered', 'lost', 'abandoned'] as const);
  const recoveredVia = zeroCounts(RECOVERED_VIA);
  const byDeclineCategory = Object.fromEntries(
    DECLINE_CATEGORIES.map((category) => [category, { opened: 0, recovered: 0 }]),
  ) as Record<DeclineCategory, { opened: number; recovered: number }>;
  const amounts = { recovered: [], in_flight: [], lost: [] } as Record<
    'recovered' | 'in_flight' | 'lost',
    Array<{ currency: string; amount: number }>
  >;

  for (const row of rows) {
    money.see(row.currency);
    byStatus[row.status] += row.campaigns;
    byDeclineCategory[row.decline_category].opened += row.campaigns;
    if (row.status === 'recovered') {
      byDeclineCategory[row.decline_category].recovered += row.campaigns;
      if (row.recovered_via) recoveredVia[row.recovered_via] += row.campaigns;
    }
    const bucket = row.status === 'abandoned' ? 'lost' : row.status;
    amounts[bucket].push({ currency: row.currency, amount: row.amount_cents });
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
  const savedMrr: Array<{ currency: string; amount: number }> = [];
  for (const row of rows) {
    money.see(row.currency);
    byOutcome[row.outcome] += row.sessions;
    if (isSavedOutcome(row.outcome)) savedMrr.push({ currency: row.currency, amount: row.mrr_cents });
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

/** The median of whole hours to recover, in days with 2 decimals; null with no recoveries. */
function medianDays(rows: RecoveryTimeRollup[]): number | null {
  const total = rows.reduce((sum, row) => sum + row.campaigns, 0);
  if (total === 0) return null;
  const hourAt = (position: number): number => {
    let seen = 0;
    for (const row of rows) {
      seen += row.campaigns;
      if (seen >= position) return row.hours_to_recover;
    }
    return rows.at(-1)!.hours_to_recover;
  };
  const middle = total % 2 === 1 ? hourAt((total + 1) / 2) : (hourAt(total / 2) + hourAt(total / 2 + 1)) / 2;
  return Math.round((middle / 24) * 100) / 100;
}
