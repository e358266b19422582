import { useMemo } from 'react';
import { CANCEL_OUTCOMES, DECLINE_CATEGORIES, RECOVERED_VIA } from '@retention/core/enums';
import { api, query } from '../api/client.js';
import type { Overview as OverviewData, OverviewPeriod } from '../api/types.js';
import { Chart, type Series } from '../components/Chart.js';
import { Filter } from '../components/ListPage.js';
import { ErrorNote, Loading, PageHeader } from '../components/states.js';
import { formatMoney, formatMonth, formatNumber, formatPercent, humanize } from '../format.js';
import { useLoad } from '../hooks.js';
import { RECOVERED_VIA_LABELS } from '../labels.js';
import { useSearchParams } from '../router.js';

const PERIODS: ReadonlyArray<{ value: OverviewPeriod; label: string }> = [
  { value: 'last_30_days', label: 'Last 30 days' },
  { value: 'last_90_days', label: 'Last 90 days' },
  { value: 'last_12_months', label: 'Last 12 months' },
  { value: 'all_time', label: 'All time' },
];

/** The overview: the chosen period's KPI cards, then the charts (each with its table). */
export default function Overview() {
  const [params, setParams] = useSearchParams();
  const period = PERIODS.find((one) => one.value === params.get('period'))?.value ?? 'last_30_days';
  const overview = useLoad(
    (signal) => api<OverviewData>('GET', `/overview${query({ period })}`, { signal }),
    `overview:${period}`,
  );
  return (
    <>
      <PageHeader title="Overview">
        <Filter
          label="Period"
          value={period}
          options={PERIODS}
          onChange={(value) => setParams({ period: value === 'last_30_days' ? '' : value })}
        />
      </PageHeader>
      {overview.loading && !overview.data && <Loading />}
      {overview.error && <ErrorNote message={overview.error} onRetry={overview.reload} />}
      {overview.data && (
        <>
          <Kpis overview={overview.data} />
          <Charts overview={overview.data} />
        </>
      )}
    </>
  );
}

function Card({ label, value }: { label: string; value: string }) {
  return (
    <div className="kpi">
      <dt>{label}</dt>
      <dd className="kpi-value">{value}</dd>
    </div>
  );
}

function periodSentence(overview: OverviewData): string {
  const label = PERIODS.find((one) => one.value === overview.period)!.label;
  const currency = overview.stats.display_currency.toUpperCase();
  if (overview.since === null) return `All time, in ${currency}.`;
  return `${label} (campaigns opened and cancel sessions started since ${overview.since}, UTC), in ${currency}.`;
}

function Kpis({ overview }: { overview: OverviewData }) {
  const { recovery, cancel_flow, display_currency: currency } = overview.stats;
  const days = recovery.median_days_to_recover;
  return (
    <section aria-label="Key figures">
      <p className="muted">{periodSentence(overview)}</p>
      <dl className="kpis">
        <Card label="Recovery rate" value={formatPercent(recovery.recovery_rate)} />
        <Card label="Recovered revenue" value={formatMoney(recovery.recovered_amount_cents, currency)} />
        <Card label="Revenue at risk" value={formatMoney(recovery.at_risk_amount_cents, currency)} />
        <Card label="Lost revenue" value={formatMoney(recovery.lost_amount_cents, currency)} />
        <Card label="Open campaigns" value={formatNumber(recovery.in_flight)} />
        <Card label="Save rate" value={formatPercent(cancel_flow.save_rate)} />
        <Card label="Saved MRR" value={formatMoney(cancel_flow.saved_mrr_cents, currency)} />
        <Card label="Median time to recover" value={days === null ? '—' : `${formatNumber(days, 1)} days`} />
      </dl>
      {/* Both read as the list's figures at a glance; they are not (docs/dashboard-ui.md, "Overview"). */}
      <p className="muted">
        Recovery rate is the share of closed campaigns (recovered, lost or abandoned) that were recovered; open ones
        count once they close.{' '}
        {recovery.gross_recovery_rate === null
          ? 'No campaign was opened in this period.'
          : `Of all campaigns opened in this period, ${formatPercent(recovery.gross_recovery_rate)} have been recovered so far.`}{' '}
        Open campaigns are those opened in this period and still in flight.
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

function Charts({ overview }: { overview: OverviewData }) {
  const currency = overview.stats.display_currency;
  const { recovery } = overview.stats;
  const months = useMemo(() => overview.campaigns_by_month.map((row) => formatMonth(row.month)), [overview]);
  const money = useMemo(() => (value: number) => formatMoney(value, currency), [currency]);

  const revenue = useMemo<Series[]>(
    () => [
      { label: 'Failed', values: overview.campaigns_by_month.map((row) => row.failed_amount_cents) },
      { label: 'Recovered', values: overview.campaigns_by_month.map((row) => row.recovered_amount_cents) },
    ],
    [overview],
  );
  const rate = useMemo<Series[]>(
    () => [{ label: 'Recovery rate', values: overview.campaigns_by_month.map((row) => row.recovery_rate) }],
    [overview],
  );
  const categories = useMemo(() => DECLINE_CATEGORIES.map(humanize), []);
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
        label: humanize(outcome),
        values: overview.cancel_sessions_by_month.map((row) => row.by_outcome[outcome] ?? 0),
      })),
    [overview],
  );
  const reasonLabels = useMemo(() => overview.cancel_reasons.map((row) => humanize(row.reason_code)), [overview]);
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
        labelHeader="Month"
      />
      <Chart
        title="Recovery rate by month"
        kind="line"
        labels={months}
        series={rate}
        format={percent}
        labelHeader="Month"
      />
      <Chart
        title="Campaigns by decline category"
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
          kind="bar"
          horizontal
          labels={reasonLabels}
          series={reasons}
          format={count}
          integer
          labelHeader="Reason"
        />
      ) : (
        <figure className="chart card">
          <figcaption className="chart-title">Cancellation reasons</figcaption>
          <p className="state empty">No cancel sessions in this period.</p>
        </figure>
      )}
    </div>
  );
}
