import { api } from '../api/client.js';
import { ErrorNote, Loading, PageHeader } from '../components/states.js';
import { formatMoney, formatNumber, formatPercent } from '../format.js';
import { useLoad } from '../hooks.js';

interface Stats {
  display_currency: string;
  unconverted_currencies: string[];
  recovery: {
    in_flight: number;
    recovery_rate: number | null;
    recovered_amount_cents: number;
    at_risk_amount_cents: number;
    lost_amount_cents: number;
    median_days_to_recover: number | null;
  };
  cancel_flow: { save_rate: number | null; saved_mrr_cents: number };
}

function Card({ label, value, note }: { label: string; value: string; note?: string }) {
  return (
    <div className="kpi">
      <dt>{label}</dt>
      <dd>
        <span className="kpi-value">{value}</span>
        {note && <span className="kpi-note">{note}</span>}
      </dd>
    </div>
  );
}

export default function Overview() {
  const stats = useLoad((signal) => api<Stats>('GET', '/stats', { signal }), 'stats');
  return (
    <>
      <PageHeader title="Overview" />
      {stats.loading && !stats.data && <Loading />}
      {stats.error && <ErrorNote message={stats.error} onRetry={stats.reload} />}
      {stats.data && <Cards stats={stats.data} />}
    </>
  );
}

function Cards({ stats }: { stats: Stats }) {
  const currency = stats.display_currency;
  const { recovery, cancel_flow } = stats;
  const days = recovery.median_days_to_recover;
  return (
    <>
      <p className="muted">All time, in {currency.toUpperCase()}.</p>
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
      {stats.unconverted_currencies.length > 0 && (
        <p className="muted">
          Amounts in {stats.unconverted_currencies.join(', ').toUpperCase()} have no exchange rate and are left out.
        </p>
      )}
    </>
  );
}
