import type { Campaign, CancelSession, Customer } from '../api/types.js';
import { formatMoney } from '../format.js';
import {
  campaignStatusLabel,
  cancelOutcomeLabel,
  cancelReasonLabel,
  declineCategoryLabel,
  declineCodeLabel,
} from '../labels.js';
import { Link } from '../router.js';
import { Badge, Clipped, type Column } from './ListPage.js';
import { Time } from './Time.js';

/** The columns of each kind of row, shared by its list page and the detail pages that list it. */

/**
 * A campaign's or cancel session's customer: their email, clipped to its column as any email in a
 * list (whole on hover), and a link to their page, as the Customers list's Email is. It was plain
 * text, and the customer's page one more click away (the row's own page, then its customer).
 */
function CustomerLink({ row }: { row: { customer_id: string; customer_email: string } }) {
  return (
    <Link to={`/customers/${row.customer_id}`} className="clip" title={row.customer_email}>
      {row.customer_email}
    </Link>
  );
}

/**
 * A list fits a 1280 px window with one line per cell (docs/dashboard-ui.md, "Lists"): days
 * without the time, emails and feedback clipped to the room left (whole on hover), and under the
 * status and the decline category a quieter line with the day it closed and the decline reason
 * in words (its code on hover). How a campaign was recovered is on its own page. Amount and First
 * failed sort the list (Column.sort), as the API's `sort` names them.
 */
export const CAMPAIGN_COLUMNS: Column<Campaign>[] = [
  {
    header: 'Invoice',
    cell: (row) => (
      <Link to={`/campaigns/${row.id}`}>
        <code>{row.psp_invoice_id}</code>
      </Link>
    ),
  },
  { header: 'Customer', cell: (row) => <CustomerLink row={row} />, fill: true },
  {
    header: 'Amount',
    cell: (row) => formatMoney(row.amount_cents, row.currency),
    numeric: true,
    sort: { key: 'amount', kind: 'money' },
  },
  {
    header: 'Status',
    cell: (row) => (
      <>
        <Badge value={row.status} label={campaignStatusLabel(row.status)} />
        {row.closed_at && (
          <span className="secondary">
            <Time value={row.closed_at} short />
          </span>
        )}
      </>
    ),
    status: true,
  },
  {
    header: 'Decline',
    cell: (row) => (
      <>
        {declineCategoryLabel(row.decline_category)}
        <Clipped className="secondary" text={declineCodeLabel(row.decline_code)} title={row.decline_code} />
      </>
    ),
  },
  {
    header: 'First failed',
    cell: (row) => <Time value={row.first_failed_at} short />,
    sort: { key: 'first_failed_at', kind: 'time' },
  },
];

/**
 * The email, which names the customer, takes the room left (a 35-character address whole at
 * 1280 px); tags, few or none on most customers, clip at 13rem like a name.
 */
export const CUSTOMER_COLUMNS: Column<Customer>[] = [
  {
    header: 'Email',
    cell: (row) => (
      <Link to={`/customers/${row.id}`} className="clip" title={row.email}>
        {row.email}
      </Link>
    ),
    fill: true,
  },
  { header: 'Name', cell: (row) => <Clipped text={row.name} /> },
  { header: 'Processor id', cell: (row) => <code>{row.psp_customer_id}</code> },
  { header: 'Tags', cell: (row) => <Clipped text={row.tags.join(', ')} /> },
  {
    header: 'Created',
    cell: (row) => <Time value={row.created_at} short />,
    sort: { key: 'created_at', kind: 'time' },
  },
];

/**
 * The columns for rows that are all one customer's (on their own page), without the Customer
 * column, which would only repeat the page's heading.
 */
export function withoutCustomer<T>(columns: Column<T>[]): Column<T>[] {
  return columns.filter((column) => column.header !== 'Customer');
}

/** When it ended (minutes after it started) is on the session's own page. */
export const CANCEL_SESSION_COLUMNS: Column<CancelSession>[] = [
  {
    header: 'Started',
    cell: (row) => (
      <Link to={`/cancel-sessions/${row.id}`}>
        <Time value={row.created_at} short withTime />
      </Link>
    ),
    sort: { key: 'created_at', kind: 'time' },
  },
  { header: 'Customer', cell: (row) => <CustomerLink row={row} /> },
  {
    header: 'Outcome',
    cell: (row) => <Badge value={row.outcome} label={cancelOutcomeLabel(row.outcome)} />,
    status: true,
  },
  { header: 'Reason', cell: (row) => cancelReasonLabel(row.reason_code) },
  { header: 'Feedback', cell: (row) => <Clipped className="long-text" text={row.feedback} />, fill: true },
  {
    header: 'MRR',
    cell: (row) => formatMoney(row.monthly_mrr_cents, row.currency),
    numeric: true,
    sort: { key: 'monthly_mrr', kind: 'money' },
  },
];
