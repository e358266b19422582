import { useId, useRef, type ReactNode } from 'react';
import type { Overview } from '../api/types.js';
import { formatMoney, formatNumber } from '../format.js';
import { declineCategoryLabel, declineCodeLabel } from '../labels.js';
import { Link } from '../router.js';
import { useStacked } from './use-stacked.js';

/**
 * A table in its box that stacks its rows when wider than the box (useStacked, as the charts'
 * tables do: `table.chart-stacked`, each figure after its column's name from `data-label`), named
 * by a heading above the box: a caption sat against the box's border, and a stacked table
 * squeezed it to a word a line.
 */
function FittedTable({ title, children }: { title: string; children: ReactNode }) {
  const box = useRef<HTMLDivElement>(null);
  const table = useRef<HTMLTableElement>(null);
  const titleId = useId();
  const stacked = useStacked(true, box, table, 'chart-stacked');
  return (
    <div>
      <h3 id={titleId}>{title}</h3>
      <div className="table-wrap" ref={box}>
        <table className={stacked ? 'chart-stacked' : undefined} ref={table} aria-labelledby={titleId}>
          {children}
        </table>
      </div>
    </div>
  );
}

/**
 * "Why payments fail" on the Overview (docs/dashboard-ui.md, "Why payments fail"): each decline
 * category of the period with its campaigns and their money in the overview's currency, each a
 * link to the Campaigns list of that category and period, then the period's most frequent decline
 * codes in the words the campaign pages use (labels.ts). Counts alone (Soft decline 25, Fraud risk
 * 3) did not say which failures cost the most, nor what a bank said.
 */
export function DeclineBreakdown({ overview, periodLabel }: { overview: Overview; periodLabel: string }) {
  const currency = overview.stats.display_currency;
  const money = (cents: number) => formatMoney(cents, currency);
  const { decline_codes: codes, other_decline_codes: others } = overview;
  const opened = overview.decline_categories.reduce((sum, category) => sum + category.opened, 0);
  return (
    <section className="card decline-breakdown" aria-labelledby="why-payments-fail">
      <h2 id="why-payments-fail" className="chart-heading">
        Why payments fail
      </h2>
      <p className="chart-period">
        {periodLabel}, by the decline the bank gave when the first payment failed; amounts in {currency.toUpperCase()}.
      </p>
      {opened === 0 ? (
        <p className="state empty">No failed payments in this period.</p>
      ) : (
        <div className="decline-tables">
          <FittedTable title="Decline categories">
            <thead>
              <tr>
                <th scope="col">Decline category</th>
                <th scope="col" className="numeric">
                  Campaigns
                </th>
                <th scope="col" className="numeric">
                  Failed amount
                </th>
                <th scope="col" className="numeric">
                  Recovered amount
                </th>
              </tr>
            </thead>
            <tbody>
              {overview.decline_categories
                .filter((category) => category.opened > 0)
                .map((category) => (
                  <tr key={category.decline_category}>
                    <th scope="row">
                      <Link to={campaignsOf(overview, category.decline_category)}>
                        {declineCategoryLabel(category.decline_category)}
                      </Link>
                    </th>
                    <td className="numeric" data-label="Campaigns">
                      {formatNumber(category.opened)}
                    </td>
                    <td className="numeric" data-label="Failed amount">
                      {money(category.failed_amount_cents)}
                    </td>
                    <td className="numeric" data-label="Recovered amount">
                      {/* One box, so that stacked on a phone it keeps to the right when it wraps under its name. */}
                      <span>
                        {money(category.recovered_amount_cents)} ({formatNumber(category.recovered)} recovered)
                      </span>
                    </td>
                  </tr>
                ))}
            </tbody>
          </FittedTable>
          <FittedTable title="Top decline codes">
            <thead>
              <tr>
                <th scope="col">Decline code</th>
                <th scope="col" className="numeric">
                  Campaigns
                </th>
                <th scope="col" className="numeric">
                  Failed amount
                </th>
              </tr>
            </thead>
            <tbody>
              {codes.map((code) => (
                <tr key={`${code.decline_category}:${code.decline_code}`}>
                  <th scope="row">
                    {declineCodeLabel(code.decline_code)} <code className="code-aside">{code.decline_code}</code>
                  </th>
                  <td className="numeric" data-label="Campaigns">
                    {formatNumber(code.opened)}
                  </td>
                  <td className="numeric" data-label="Failed amount">
                    {money(code.failed_amount_cents)}
                  </td>
                </tr>
              ))}
              {others.codes > 0 && (
                <tr>
                  <th scope="row">
                    {formatNumber(others.codes)} other {others.codes === 1 ? 'code' : 'codes'}
                  </th>
                  <td className="numeric" data-label="Campaigns">
                    {formatNumber(others.opened)}
                  </td>
                  <td className="numeric" data-label="Failed amount">
                    {money(others.failed_amount_cents)}
                  </td>
                </tr>
              )}
            </tbody>
          </FittedTable>
        </div>
      )}
    </section>
  );
}

/**
 * The Campaigns list of a decline category in the overview's period: its UTC days (`tz=UTC`, so
 * the list counts the days the overview counted, whoever opens it), `to` the day after the last
 * for a period with an end; all time has no days.
 */
function campaignsOf(overview: Overview, category: string): string {
  const params = new URLSearchParams({ decline_category: category });
  if (overview.since !== null) {
    params.set('from', overview.since);
    if (overview.until !== null) params.set('to', overview.until);
    params.set('tz', 'UTC');
  }
  return `/campaigns?${params.toString()}`;
}
