import { useState } from 'react';
import { api, query } from '../api/client.js';
import type { List } from '../api/types.js';
import { Badge, Filter, PagedTable, type Column } from '../components/ListPage.js';
import { PageHeader } from '../components/states.js';
import { Time } from '../components/Time.js';
import { formatMoney } from '../format.js';
import { usePaged } from '../hooks.js';

interface Campaign {
  id: string;
  psp_invoice_id: string;
  amount_cents: number;
  currency: string;
  status: string;
  decline_code: string;
  decline_category: string;
  recovered_via: string | null;
  first_failed_at: string;
  closed_at: string | null;
}

const STATUSES = ['in_flight', 'recovered', 'lost', 'abandoned'] as const;

const COLUMNS: Column<Campaign>[] = [
  { header: 'Invoice', cell: (row) => <code>{row.psp_invoice_id}</code> },
  { header: 'Amount', cell: (row) => formatMoney(row.amount_cents, row.currency), numeric: true },
  { header: 'Status', cell: (row) => <Badge value={row.status} /> },
  { header: 'Decline', cell: (row) => `${row.decline_category.replaceAll('_', ' ')} (${row.decline_code})` },
  { header: 'Recovered via', cell: (row) => row.recovered_via?.replaceAll('_', ' ') ?? '—' },
  { header: 'First failed', cell: (row) => <Time value={row.first_failed_at} /> },
  { header: 'Closed', cell: (row) => <Time value={row.closed_at} /> },
];

export default function Campaigns() {
  const [status, setStatus] = useState('');
  const list = usePaged(
    (cursor) => api<List<Campaign>>('GET', `/campaigns${query({ status, cursor })}`),
    `campaigns:${status}`,
  );
  return (
    <>
      <PageHeader title="Campaigns">
        <Filter label="Status" value={status} options={STATUSES} onChange={setStatus} />
      </PageHeader>
      <PagedTable caption="Recovery campaigns" columns={COLUMNS} list={list} empty="No campaigns match." />
    </>
  );
}
