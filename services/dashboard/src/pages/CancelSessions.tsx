import { useState } from 'react';
import { api, query } from '../api/client.js';
import type { List } from '../api/types.js';
import { Badge, Filter, PagedTable, type Column } from '../components/ListPage.js';
import { PageHeader } from '../components/states.js';
import { Time } from '../components/Time.js';
import { formatMoney } from '../format.js';
import { usePaged } from '../hooks.js';

interface CancelSession {
  id: string;
  outcome: string;
  reason_code: string;
  feedback: string | null;
  monthly_mrr_cents: number;
  currency: string;
  created_at: string;
  ended_at: string;
}

const OUTCOMES = ['saved_discount', 'saved_pause', 'saved_downgrade', 'saved_other', 'canceled', 'abandoned'] as const;

const COLUMNS: Column<CancelSession>[] = [
  { header: 'Outcome', cell: (row) => <Badge value={row.outcome} /> },
  { header: 'Reason', cell: (row) => row.reason_code.replaceAll('_', ' ') },
  { header: 'Feedback', cell: (row) => row.feedback ?? '—' },
  { header: 'MRR', cell: (row) => formatMoney(row.monthly_mrr_cents, row.currency), numeric: true },
  { header: 'Started', cell: (row) => <Time value={row.created_at} /> },
  { header: 'Ended', cell: (row) => <Time value={row.ended_at} /> },
];

export default function CancelSessions() {
  const [outcome, setOutcome] = useState('');
  const list = usePaged(
    (cursor) => api<List<CancelSession>>('GET', `/cancel_sessions${query({ outcome, cursor })}`),
    `sessions:${outcome}`,
  );
  return (
    <>
      <PageHeader title="Cancel sessions">
        <Filter label="Outcome" value={outcome} options={OUTCOMES} onChange={setOutcome} />
      </PageHeader>
      <PagedTable caption="Cancel sessions" columns={COLUMNS} list={list} empty="No cancel sessions match." />
    </>
  );
}
