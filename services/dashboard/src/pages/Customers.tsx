import { api, query } from '../api/client.js';
import type { List } from '../api/types.js';
import { PagedTable, type Column } from '../components/ListPage.js';
import { PageHeader } from '../components/states.js';
import { Time } from '../components/Time.js';
import { usePaged } from '../hooks.js';

interface Customer {
  id: string;
  psp_customer_id: string;
  email: string;
  name: string | null;
  tags: string[];
  created_at: string;
}

const COLUMNS: Column<Customer>[] = [
  { header: 'Name', cell: (row) => row.name ?? '—' },
  { header: 'Email', cell: (row) => row.email },
  { header: 'Processor id', cell: (row) => <code>{row.psp_customer_id}</code> },
  { header: 'Tags', cell: (row) => (row.tags.length ? row.tags.join(', ') : '—') },
  { header: 'Created', cell: (row) => <Time value={row.created_at} /> },
];

export default function Customers() {
  const list = usePaged((cursor) => api<List<Customer>>('GET', `/customers${query({ cursor })}`), 'customers');
  return (
    <>
      <PageHeader title="Customers" />
      <PagedTable caption="Customers" columns={COLUMNS} list={list} empty="No customers yet." />
    </>
  );
}
