import { api } from '../api/client.js';
import type { CustomerDetail as Detail, Subscription, Winback } from '../api/types.js';
import { CAMPAIGN_COLUMNS, CANCEL_SESSION_COLUMNS, withoutCustomer } from '../components/columns.js';
import { Facts } from '../components/Facts.js';
import { Badge, DataTable, type Column } from '../components/ListPage.js';
import { Empty, LoadError, Loading, PageHeader } from '../components/states.js';
import { BreakableEmail } from '../components/BreakableUrl.js';
import { ProcessorId } from '../components/ProcessorId.js';
import { Time } from '../components/Time.js';
import { formatMoney, formatNumber } from '../format.js';
import { subscriptionStatusLabel } from '../labels.js';
import { useLoad } from '../hooks.js';
import { ListCrumb } from '../router.js';

const SUBSCRIPTION_COLUMNS: Column<Subscription>[] = [
  { header: 'Plan', cell: (row) => row.plan_name },
  { header: 'Price', cell: (row) => `${formatMoney(row.amount_cents, row.currency)} / ${row.interval}`, numeric: true },
  {
    header: 'Status',
    cell: (row) => <Badge value={row.status} label={subscriptionStatusLabel(row.status)} />,
  },
  { header: 'Processor id', cell: (row) => <code>{row.psp_subscription_id}</code> },
  { header: 'Current period ends', cell: (row) => <Time value={row.current_period_end} /> },
  { header: 'Canceled', cell: (row) => <Time value={row.canceled_at} /> },
];

// The customer's campaigns and cancel sessions: the lists' columns, less the customer.
const THEIR_CAMPAIGN_COLUMNS = withoutCustomer(CAMPAIGN_COLUMNS);
const THEIR_CANCEL_SESSION_COLUMNS = withoutCustomer(CANCEL_SESSION_COLUMNS);

const WINBACK_COLUMNS: Column<Winback>[] = [
  { header: 'Came back', cell: (row) => <Time value={row.recorded_at} /> },
  { header: 'Days away', cell: (row) => formatNumber(row.days_away), numeric: true },
  { header: 'Amount', cell: (row) => formatMoney(row.amount_cents, row.currency), numeric: true },
  { header: 'Processor subscription', cell: (row) => <code>{row.psp_subscription_id}</code> },
];

/** One customer with everything we know of them: subscriptions, campaigns, cancel sessions, win-backs. */
export default function CustomerDetail({ id }: { id: string }) {
  const detail = useLoad(
    (signal) => api<Detail>('GET', `/customers/${encodeURIComponent(id)}`, { signal }),
    `customer:${id}`,
  );
  const customer = detail.data;
  return (
    <>
      <p className="breadcrumb">
        <ListCrumb to="/customers">Customers</ListCrumb>
      </p>
      {/* As a cancel session's page names its customer (BreakableEmail), at the size of every
          detail page's title: HeadingId, an id's box, set it at 1.1rem on phones. */}
      <PageHeader title={customer ? <BreakableEmail email={customer.email} /> : 'Customer'} />
      {detail.loading && !customer && <Loading />}
      <LoadError loaded={detail} what="customer" back={{ to: '/customers', label: 'All customers' }} />
      {customer && (
        <div className="stack">
          <section className="card" aria-labelledby="customer-facts">
            <h2 id="customer-facts">Customer</h2>
            <Facts
              facts={[
                ['Name', customer.name ?? '—'],
                ['Processor id', <ProcessorId id={customer.psp_customer_id} record="customer" />],
                ['Tags', customer.tags.length ? customer.tags.join(', ') : '—'],
                ['Created', <Time value={customer.created_at} sayUtc />],
              ]}
            />
          </section>
          <Related
            title="Subscriptions"
            empty="No subscriptions."
            columns={SUBSCRIPTION_COLUMNS}
            rows={customer.subscriptions}
          />
          <Related
            title="Recovery campaigns"
            empty="No failed payments."
            columns={THEIR_CAMPAIGN_COLUMNS}
            rows={customer.campaigns}
          />
          <Related
            title="Cancel sessions"
            empty="No cancel sessions."
            columns={THEIR_CANCEL_SESSION_COLUMNS}
            rows={customer.cancel_sessions}
          />
          <Related title="Win-backs" empty="No win-backs." columns={WINBACK_COLUMNS} rows={customer.winbacks} />
        </div>
      )}
    </>
  );
}

/** One kind of the customer's rows: a titled table, or a line saying there are none. */
function Related<T extends { id: string }>({
  title,
  empty,
  columns,
  rows,
}: {
  title: string;
  empty: string;
  columns: Column<T>[];
  rows: T[];
}) {
  return (
    <section>
      <h2>{title}</h2>
      {rows.length > 0 ? <DataTable caption={title} columns={columns} rows={rows} stacks /> : <Empty>{empty}</Empty>}
    </section>
  );
}
