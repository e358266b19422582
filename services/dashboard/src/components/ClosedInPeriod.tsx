import { useId } from 'react';
import type { Overview } from '../api/types.js';
import { formatMoney, formatNumber } from '../format.js';

/**
 * "Closed in …" on the Overview (docs/dashboard-ui.md, "Closed in the period"): the money won
 * back and lost in the period, by the day each campaign closed, whenever its payment first
 * failed (the API's `closed_in_period`). The cards above it count the period's campaigns by the
 * day they opened, so "Recovered revenue" there did not answer a finance reader's "how much did
 * we recover in November?". A section of its own, with its own heading and its own words
 * ("Recovered", "Lost"), so that neither set of figures passes for the other.
 */
export function ClosedInPeriod({ overview, when }: { overview: Overview; when: string }) {
  const headingId = useId();
  const currency = overview.stats.display_currency;
  // An older API (a rolling deploy) answers without the figures: the section is left out, not the page.
  const closed = (overview as Partial<Overview>).closed_in_period;
  if (!closed) return null;
  return (
    <section className="closed-in-period" aria-labelledby={headingId}>
      <h2 id={headingId} className="chart-heading">
        Closed {when}
      </h2>
      <p className="chart-period">
        By the UTC day each campaign closed, whenever its first payment failed; amounts in {currency.toUpperCase()}. The
        cards above count campaigns by the day they opened.
      </p>
      <dl className="kpis">
        <div className="kpi">
          <dt>Recovered</dt>
          <dd className="kpi-value">{formatMoney(closed.recovered_amount_cents, currency)}</dd>
          <dd className="kpi-detail">{campaigns(closed.recovered)}</dd>
        </div>
        <div className="kpi">
          <dt>Lost</dt>
          <dd className="kpi-value">{formatMoney(closed.lost_amount_cents, currency)}</dd>
          <dd className="kpi-detail">{campaigns(closed.lost)} lost or abandoned</dd>
        </div>
      </dl>
    </section>
  );
}

function campaigns(count: number): string {
  return `${formatNumber(count)} ${count === 1 ? 'campaign' : 'campaigns'}`;
}
