import { useId, useMemo } from 'react';
import { CANCEL_OUTCOMES, DECLINE_CATEGORIES, RECOVERED_VIA } from '@retention/core/enums';
import { api, query } from '../api/client.js';
import type { ExchangeRate, Overview as OverviewData, OverviewPeriod } from '../api/types.js';
import { ClosedInPeriod } from '../components/ClosedInPeriod.js';
import { DeclineBreakdown } from '../components/DeclineBreakdown.js';
import { Chart, ChartTitle, type Series } from '../components/Chart.js';
import { quoted } from '../components/FilterStates.js';
import { Filter } from '../components/ListPage.js';
import { ErrorNote, Loading, PageHeader } from '../components/states.js';
import {
  formatDays,
  formatMoney,
  formatMoneyTick,
  formatMonth,
  formatNumber,
  formatPercent,
  formatPercentTick,
  formatRate,
  formatUtcDay,
  shareOf,
} from '../format.js';
import { useLoad } from '../hooks.js';
import { cancelOutcomeLabel, cancelReasonLabel, DECLINE_CATEGORY_LABELS, RECOVERED_VIA_LABELS } from '../labels.js';
import { useSearchParams } from '../router.js';

/**
 * The picker's periods: calendar months first ("how much did we recover this month"), then the
 * rolling ones. Every period is of UTC days, as the monthly charts are (docs/dashboard-ui.md,
 * "Overview periods").
 */
const PERIODS: ReadonlyArray<{ value: OverviewPeriod; label: string; basis: string }> = [
  { value: 'this_month', label: 'This month', basis: 'this month' },
  { value: 'last_month', label: 'Last month', basis: 'last month' },
  { value: 'last_30_days', label: 'Last 30 days', basis: 'in the last 30 days' },
  { value: 'last_90_days', label: 'Last 90 days', basis: 'in the last 90 days' },
  { value: 'last_12_months', label: 'Last 12 months', basis: 'in the last 12 months' },
  { value: 'all_time', label: 'All time', basis: 'at any time' },
  { value: 'custom', label: 'Custom range', basis: 'in the range' },
];

const DEFAULT_PERIOD = PERIODS.find((one) => one.value === 'last_30_days')!;

/** The last UTC day of a range that ends before `until`. */
function dayBefore(until: string): string {
  return new Date(Date.parse(`${until}T00:00:00Z`) - 86_400_000).toISOString().slice(0, 10);
}

/** A custom range's days as the page writes dates ("Nov 1, 2026 – Nov 15, 2026"). */
function rangeLabel(overview: Pick<OverviewData, 'since' | 'until'>): string {
  return `${formatUtcDay(overview.since!)} – ${formatUtcDay(dayBefore(overview.until!))}`;
}

/** A period in the picker's words ("Last 30 days"); a custom range by its days. */
function periodLabel(overview: Pick<OverviewData, 'period' | 'since' | 'until'>): string {
  if (overview.period === 'custom') return rangeLabel(overview);
  return PERIODS.find((one) => one.value === overview.period)!.label;
}

/** When a card's campaigns or sessions opened, as its sub-label says it ("in the last 30 days", "this month"). */
function periodBasis(overview: Pick<OverviewData, 'period' | 'since' | 'until'>): string {
  if (overview.period === 'custom')
    return `from ${formatUtcDay(overview.since!)} to ${formatUtcDay(dayBefore(overview.until!))}`;
  return PERIODS.find((one) => one.value === overview.period)!.basis;
}

/**
 * The period as the two groups' headings say it ("Opened …", "Closed …"): a calendar month by its
 * name as the monthly charts label it ("in Nov 2026 so far"), any other period as the cards do.
 */
function periodWhen(overview: Pick<OverviewData, 'period' | 'since' | 'until'>): string {
  if (overview.period === 'this_month') return `in ${formatMonth(overview.since!.slice(0, 7))} so far`;
  if (overview.period === 'last_month') return `in ${formatMonth(overview.since!.slice(0, 7))}`;
  return periodBasis(overview);
}

const DAY = /^\d{4}-\d{2}-\d{2}$/;

/** The UTC day of now, `YYYY-MM-DD`. */
function utcToday(): string {
  return new Date().toISOString().slice(0, 10);
}

/** The overview: the chosen period's KPI cards, then the charts (each with its table). */
export default function Overview() {
  const [params, setParams] = useSearchParams();
  const asked = params.get('period') ?? '';
  const from = params.get('from') ?? '';
  const to = params.get('to') ?? '';
  // A custom range is its two UTC days, both included, the first on or before the last.
  const rangeOk = DAY.test(from) && DAY.test(to) && from <= to;
  const known = PERIODS.find((one) => one.value === asked && (asked !== 'custom' || rangeOk));
  const period = known?.value ?? DEFAULT_PERIOD.value;
  // A period the address names that the page does not have (a mistyped or an old shared link),
  // or a custom range without two days in order: the default period is shown, and said to be, so
  // the link never passes for what it asked.
  const unknownPeriod = asked !== '' && !known ? asked : null;
  const custom = period === 'custom';
  const problemId = useId();
  const overview = useLoad(
    (signal) => api<OverviewData>('GET', `/overview${query(custom ? { period, from, to } : { period })}`, { signal }),
    `overview:${period}:${custom ? `${from}:${to}` : ''}`,
  );
  return (
    <>
      <PageHeader title="Overview">
        <Filter
          label="Period"
          value={period}
          options={PERIODS}
          describedBy={unknownPeriod === null ? undefined : problemId}
          onChange={(value) =>
            // A custom range starts as this UTC month so far, a range to change rather than none.
            setParams(
              value === 'custom'
                ? { period: value, from: `${utcToday().slice(0, 8)}01`, to: utcToday() }
                : { period: value === DEFAULT_PERIOD.value ? '' : value, from: '', to: '' },
            )
          }
        />
        {(custom || asked === 'custom') && (
          // The two days together, so that on a phone they share the row under Period (styles.css).
          <div className="period-range">
            <label className="filter">
              <span>From (UTC day)</span>
              <input
                type="date"
                value={from}
                onChange={(event) => setParams({ period: 'custom', from: event.target.value })}
              />
            </label>
            <label className="filter">
              <span>To (UTC day, included)</span>
              <input
                type="date"
                value={to}
                onChange={(event) => setParams({ period: 'custom', to: event.target.value })}
              />
            </label>
          </div>
        )}
      </PageHeader>
      {unknownPeriod !== null && (
        <div className="period-problem">
          <p id={problemId} className="field-error" role="alert">
            {unknownPeriod === 'custom'
              ? 'The custom range needs a first and a last day, the first on or before the last, so the Overview shows the '
              : `The address asks for period ${quoted(unknownPeriod)}, which the Overview does not have, so it shows the `}
            {DEFAULT_PERIOD.label.toLowerCase()}.
          </p>
          {/* The picker cannot offer its shown period as a change: this drops the word from the address. */}
          <button type="button" className="button small" onClick={() => setParams({ period: '', from: '', to: '' })}>
            Clear period
          </button>
        </div>
      )}
      {overview.loading && !overview.data && <Loading />}
      {overview.error && <ErrorNote message={overview.error} onRetry={overview.reload} />}
      {overview.data && (
        <>
          <Kpis overview={overview.data} />
          <ClosedInPeriod overview={overview.data} when={periodWhen(overview.data)} />
          <DeclineBreakdown overview={overview.data} periodLabel={periodLabel(overview.data)} />
          <Charts overview={overview.data} />
        </>
      )}
    </>
  );
}

/** A KPI: its label, its figure, and (where the figure alone misleads) what it is of, under it. */
function Card({ label, value, detail }: { label: string; value: string; detail?: string }) {
  return (
    <div className="kpi">
      <dt>{label}</dt>
      <dd className="kpi-value">{value}</dd>
      {detail && <dd className="kpi-detail">{detail}</dd>}
    </div>
  );
}

/** "2 of 3", "1 campaign": counts as a sentence reads them. */
function campaigns(count: number): string {
  return `${formatNumber(count)} ${count === 1 ? 'campaign' : 'campaigns'}`;
}

/** "3 closed campaigns": "2 of 3 campaigns closed" read as if all 3 were closed. */
function closedCampaigns(count: number): string {
  return `${formatNumber(count)} closed ${count === 1 ? 'campaign' : 'campaigns'}`;
}

function sessions(count: number): string {
  return `${formatNumber(count)} ${count === 1 ? 'session' : 'sessions'}`;
}

function periodSentence(overview: OverviewData): string {
  const label = periodLabel(overview);
  const currency = overview.stats.display_currency.toUpperCase();
  if (overview.since === null) return `All time, in ${currency}.`;
  // A calendar month by its name, as the monthly charts label it ("Nov 2026"); a UTC month, and said so.
  if (overview.period === 'this_month')
    return `${label} (campaigns opened and cancel sessions started in ${formatMonth(overview.since.slice(0, 7))} so far, UTC), in ${currency}.`;
  if (overview.period === 'custom')
    return `${label} (campaigns opened and cancel sessions started on these UTC days), in ${currency}.`;
  if (overview.period === 'last_month')
    return `${label} (campaigns opened and cancel sessions started in ${formatMonth(overview.since.slice(0, 7))}, UTC), in ${currency}.`;
  // The day as every other date on the page reads ("Oct 30, 2026"), not ISO; a UTC day, and said so.
  return `${label} (campaigns opened and cancel sessions started since ${formatUtcDay(overview.since)}, UTC), in ${currency}.`;
}

/** "EUR 0.92 and JPY 150": rates as the note names them. */
function rateList(rates: readonly ExchangeRate[]): string {
  const named = rates.map((rate) => `${rate.currency.toUpperCase()} ${formatRate(rate.per_usd)}`);
  return named.length === 1 ? named[0]! : `${named.slice(0, -1).join(', ')} and ${named.at(-1)!}`;
}

/**
 * Which exchange rates the page's money was converted with (the API's `exchange_rates`), or null
 * when it converted nothing: the service's fixed table, one rate per currency whatever a
 * payment's date, each a shipped default (approximate, undated) or one the operator set on a day.
 * In a finance reader's words (docs/dashboard-ui.md, "Overview wording"): "fixed rates per US
 * dollar … built-in approximate rates, not dated" read as jargon.
 */
function ratesSentence(overview: OverviewData): string | null {
  const rates = overview.exchange_rates;
  if (rates.length === 0) return null;
  const groups: string[] = [];
  const builtIn = rates.filter((rate) => rate.set_at === null);
  if (builtIn.length > 0) {
    const plural = builtIn.length === 1 ? 'rate' : 'rates';
    groups.push(`${rateList(builtIn)} (standard ${plural} built into the service, approximate)`);
  }
  const days = new Map<string, ExchangeRate[]>();
  for (const rate of rates) {
    if (rate.set_at === null) continue;
    const day = rate.set_at.slice(0, 10);
    days.set(day, [...(days.get(day) ?? []), rate]);
  }
  for (const [day, set] of [...days].sort(([a], [b]) => a.localeCompare(b))) {
    groups.push(`${rateList(set)} (set by your operator on ${formatUtcDay(day)}, UTC)`);
  }
  const currency = overview.stats.display_currency.toUpperCase();
  return (
    `Amounts in other currencies are converted to ${currency} at one fixed rate per currency, not at the ` +
    `rate of each payment's date. Units of each currency to 1 US dollar: ${groups.join('; ')}.`
  );
}

function Kpis({ overview }: { overview: OverviewData }) {
  const { recovery, cancel_flow, display_currency: currency } = overview.stats;
  // Shown to 1 place, as the rates beside it: the stats' 2-place figure, rounded again.
  const days = recovery.median_days_to_recover;
  const rates = ratesSentence(overview);
  const closed = recovery.recovered + recovery.lost + recovery.abandoned;
  // The save rate's whole: sessions that ended saved or canceled (an abandoned one decided nothing).
  const decided = cancel_flow.saved + cancel_flow.canceled;
  // Every card counts campaigns by the day they opened and sessions by the day they started (a
  // cohort, as GET /api/v1/stats does: spec 2.4), and says so where it is read: "Lost revenue
  // $0.00" for the last 30 days read as nothing lost, beside two campaigns lost this month that
  // opened before it (docs/dashboard-ui.md, "What each card counts").
  const basis = periodBasis(overview);
  const opened = `opened ${basis}`;
  const lost = recovery.lost + recovery.abandoned;
  return (
    // Headed by its basis as "Closed …" below it is: the two groups' figures differ ("Lost revenue
    // $0.00" here, "Lost $329.57" there) and read as a contradiction with only a grey line to
    // tell them apart (docs/dashboard-ui.md, "Opened and closed"). The region keeps its name.
    <section className="opened-in-period" aria-label="Key figures">
      <h2 className="chart-heading">Opened {periodWhen(overview)}</h2>
      <p className="muted">{periodSentence(overview)}</p>
      <dl className="kpis">
        {/* recovery_rate alone read as the result: 100% beside 19 campaigns still open, when one
            of one closed was recovered. Each rate names what it is of, with its counts. */}
        <Card
          label="Recovery rate of closed campaigns"
          value={formatPercent(shareOf(recovery.recovered, closed))}
          detail={`${formatNumber(recovery.recovered)} recovered of ${closedCampaigns(closed)} ${opened}`}
        />
        <Card
          label="Recovered so far, of all campaigns"
          value={formatPercent(shareOf(recovery.recovered, recovery.opened))}
          detail={`${formatNumber(recovery.recovered)} of ${campaigns(recovery.opened)} ${opened}; ${formatNumber(recovery.in_flight)} still open`}
        />
        <Card
          label="Recovered revenue"
          value={formatMoney(recovery.recovered_amount_cents, currency)}
          detail={`${campaigns(recovery.recovered)} recovered, of those ${opened}`}
        />
        <Card
          label="Revenue at risk"
          value={formatMoney(recovery.at_risk_amount_cents, currency)}
          detail={`${campaigns(recovery.in_flight)} still open, of those ${opened}`}
        />
        <Card
          label="Lost revenue"
          value={formatMoney(recovery.lost_amount_cents, currency)}
          detail={`${campaigns(lost)} lost or abandoned, of those ${opened}`}
        />
        <Card
          label="Save rate"
          value={formatPercent(shareOf(cancel_flow.saved, decided))}
          detail={`${formatNumber(cancel_flow.saved)} saved of ${sessions(decided)} started ${basis} that ended saved or canceled`}
        />
        <Card
          label="Saved MRR"
          value={formatMoney(cancel_flow.saved_mrr_cents, currency)}
          detail={`${sessions(cancel_flow.saved)} saved, of those started ${basis}`}
        />
        <Card
          label="Median time to recover"
          value={formatDays(days)}
          detail={`over ${campaigns(recovery.recovered)} recovered, of those ${opened}`}
        />
      </dl>
      {rates && <p className="muted">{rates}</p>}
      {/* The two rates read at a glance as one; they are not (docs/dashboard-ui.md, "Overview"). */}
      <p className="muted">
        Closed campaigns are those recovered, lost or abandoned; an open one counts in the first rate once it closes.
        Every figure counts campaigns by the day their first payment failed and cancel sessions by the day they started,
        whenever they closed: a campaign lost in this period that opened before it is counted in its own period.
      </p>
      {overview.unconverted_currencies.length > 0 && (
        <p className="notice" role="note">
          Amounts in {overview.unconverted_currencies.map((code) => code.toUpperCase()).join(', ')} have no exchange
          rate to {currency.toUpperCase()} and are left out of the totals and charts. Counts include them.
        </p>
      )}
    </section>
  );
}

/** Fewer closed campaigns than this in a month: its recovery rate is drawn hollow (Series' `faint`). */
const SMALL_SAMPLE = 5;

function Charts({ overview }: { overview: OverviewData }) {
  const currency = overview.stats.display_currency;
  // The charts of the chosen period name it; the monthly ones cover the last 12 months whatever it.
  const period = periodLabel(overview);
  const { recovery } = overview.stats;
  const months = useMemo(() => overview.campaigns_by_month.map((row) => formatMonth(row.month)), [overview]);
  const money = useMemo(() => (value: number) => formatMoney(value, currency), [currency]);
  const moneyTick = useMemo(() => (value: number) => formatMoneyTick(value, currency), [currency]);

  const revenue = useMemo<Series[]>(
    () => [
      { label: 'Failed', values: overview.campaigns_by_month.map((row) => row.failed_amount_cents) },
      { label: 'Recovered', values: overview.campaigns_by_month.map((row) => row.recovered_amount_cents) },
    ],
    [overview],
  );
  const rate = useMemo<Series[]>(
    () => [
      {
        label: 'Recovery rate',
        values: overview.campaigns_by_month.map((row) => shareOf(row.recovered, row.closed)),
        notes: overview.campaigns_by_month.map((row) =>
          row.closed === 0 ? null : `${formatNumber(row.recovered)} of ${formatNumber(row.closed)} closed`,
        ),
        // One or two campaigns make a month's rate 0% or 100%: drawn hollow, and said so under the chart.
        faint: overview.campaigns_by_month.map((row) => row.closed > 0 && row.closed < SMALL_SAMPLE),
      },
    ],
    [overview],
  );
  const fewClosed = overview.campaigns_by_month.some((row) => row.closed > 0 && row.closed < SMALL_SAMPLE);
  // The lists' and filters' words (labels.ts), in sentence case as "Retry" and "Card update" beside them.
  const categories = useMemo(() => DECLINE_CATEGORIES.map((category) => DECLINE_CATEGORY_LABELS[category]), []);
  const byCategory = useMemo<Series[]>(
    () => [
      { label: 'Opened', values: DECLINE_CATEGORIES.map((key) => recovery.by_decline_category[key]?.opened ?? 0) },
      {
        label: 'Recovered',
        values: DECLINE_CATEGORIES.map((key) => recovery.by_decline_category[key]?.recovered ?? 0),
      },
    ],
    [recovery],
  );
  const viaLabels = useMemo(() => RECOVERED_VIA.map((key) => RECOVERED_VIA_LABELS[key]), []);
  const via = useMemo<Series[]>(
    () => [{ label: 'Campaigns', values: RECOVERED_VIA.map((key) => recovery.recovered_via[key] ?? 0) }],
    [recovery],
  );
  const outcomes = useMemo<Series[]>(
    () =>
      CANCEL_OUTCOMES.map((outcome) => ({
        label: cancelOutcomeLabel(outcome),
        values: overview.cancel_sessions_by_month.map((row) => row.by_outcome[outcome] ?? 0),
      })),
    [overview],
  );
  const reasonLabels = useMemo(
    () => overview.cancel_reasons.map((row) => cancelReasonLabel(row.reason_code)),
    [overview],
  );
  const reasons = useMemo<Series[]>(
    () => [{ label: 'Sessions', values: overview.cancel_reasons.map((row) => row.sessions) }],
    [overview],
  );
  const count = useMemo(() => (value: number) => formatNumber(value), []);
  const percent = useMemo(() => (value: number) => formatPercent(value), []);

  return (
    <div className="charts">
      <p className="muted charts-note">Monthly charts cover the last 12 months (UTC), whatever the period.</p>
      <Chart
        title={`Failed and recovered revenue by month (${currency.toUpperCase()})`}
        kind="bar"
        labels={months}
        series={revenue}
        format={money}
        formatTick={moneyTick}
        labelHeader="Month"
      />
      <Chart
        title="Recovery rate by month"
        kind="line"
        labels={months}
        series={rate}
        format={percent}
        formatTick={formatPercentTick}
        labelHeader="Month"
        note={
          fewClosed
            ? `Each month's rate is of the campaigns opened in it that have closed (in the tooltip and the table). A hollow point is a month with fewer than ${SMALL_SAMPLE} closed: too few to read as a trend.`
            : "Each month's rate is of the campaigns opened in it that have closed (in the tooltip and the table)."
        }
      />
      <Chart
        title="Campaigns by decline category"
        period={period}
        kind="bar"
        horizontal
        labels={categories}
        series={byCategory}
        format={count}
        integer
        labelHeader="Decline category"
      />
      <Chart
        title="How campaigns were recovered"
        period={period}
        kind="bar"
        labels={viaLabels}
        series={via}
        format={count}
        integer
        labelHeader="Recovered by"
      />
      <Chart
        title="Cancel sessions by outcome by month"
        kind="bar"
        stacked
        labels={months}
        series={outcomes}
        format={count}
        integer
        labelHeader="Month"
      />
      {reasons[0]!.values.length > 0 ? (
        <Chart
          title="Cancellation reasons"
          period={period}
          kind="bar"
          horizontal
          labels={reasonLabels}
          series={reasons}
          format={count}
          integer
          labelHeader="Reason"
        />
      ) : (
        <figure className="chart card" aria-label={`Cancellation reasons, ${period}`}>
          {/* The heading a screen reader jumps to, as Chart's. */}
          <ChartTitle title="Cancellation reasons" period={period} />
          <p className="state empty">No cancel sessions in this period.</p>
        </figure>
      )}
    </div>
  );
}
