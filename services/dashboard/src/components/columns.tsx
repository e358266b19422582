import type { Campaign, CancelSession, Customer } from '../api/types.js';
import { formatMoney, humanize } from '../format.js';
import { Link } from '../router.js';
import { Badge, type Column } from './ListPage.js';
import { Time } from './Time.js';

/** The columns of each kind of row, shared by its list page and the detail pages that list it. */

export const CAMPAIGN_COLUMNS: Column<Campaign>[] = [
  {
    header: 'Invoice',
    cell: (row) => (
      <Link to={`/campaigns/${row.id}`}>
        <code>{row.psp_invoice_id}</code>
      </Link>
    ),
  },
  { header: 'Customer', cell: (row) => row.customer_email ?? '—' },
  { header: 'Amount', cell: (row) => formatMoney(row.amount_cents, row.currency), numeric: true },
  { header: 'Status', cell: (row) => <Badge value={row.status} /> },
  { header: 'Decline', cell: (row) => `${humanize(row.decline_category)} (${row.decline_code})` },
  { header: 'Recovered via', cell: (row) => (row.recovered_via ? humanize(row.recovered_via) : '—') },
  { header: 'First failed', cell: (row) => <Time value={row.first_failed_at} /> },
  { header: 'Closed', cell: (row) => <Time value={row.closed_at} /> },
];

export const CUSTOMER_COLUMNS: Column<Customer>[] = [
  { header: 'Email', cell: (row) => <Link to={`/customers/${row.id}`}>{row.email}</Link> },
  { header: 'Name', cell: (row) => row.name ?? '—' },
  { header: 'Processor id', cell: (row) => <code>{row.psp_customer_id}</code> },
  { header: 'Tags', cell: (row) => (row.tags.length ? row.tags.join(', ') : '—') },
  { header: 'Created', cell: (row) => <Time value={row.created_at} /> },
];

export const CANCEL_SESSION_COLUMNS: Column<CancelSession>[] = [
  {
    header: 'Started',
    cell: (row) => (
      <Link to={`/cancel-sessions/${row.id}`}>
        <Time value={row.created_at} />
      </Link>
    ),
  },
  { header: 'Customer', cell: (row) => row.customer_email ?? '—' },
  { header: 'Outcome', cell: (row) => <Badge value={row.outcome} /> },
  { header: 'Reason', cell: (row) => humanize(row.reason_code) },
  { header: 'Feedback', cell: (row) => <span className="clip">{row.feedback ?? '—'}</span> },
  { header: 'MRR', cell: (row) => formatMoney(row.monthly_mrr_cents, row.currency), numeric: true },
  { header: 'Ended', cell: (row) => <Time value={row.ended_at} /> },
];
