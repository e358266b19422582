import { CANCEL_OUTCOMES, CANCEL_REASON_CODES } from '@retention/core/enums';
import { API_BASE, api, query } from '../api/client.js';
import type { CancelSession, List } from '../api/types.js';
import { CANCEL_SESSION_COLUMNS } from '../components/columns.js';
import { ExportLink, Filter, PagedTable } from '../components/ListPage.js';
import { PageHeader } from '../components/states.js';
import { usePaged } from '../hooks.js';
import { useFilters } from '../router.js';
import { cancelOutcomeLabel, cancelReasonLabel } from '../labels.js';

const FILTERS = ['outcome', 'reason_code'] as const;

export default function CancelSessions() {
  const [filters, setParams] = useFilters(FILTERS);
  const filterQuery = query(filters);
  const list = usePaged(
    (cursor) => api<List<CancelSession>>('GET', `/cancel_sessions${query({ ...filters, cursor })}`),
    `sessions${filterQuery}`,
  );
  return (
    <>
      <PageHeader title="Cancel sessions">
        <ExportLink href={`${API_BASE}/cancel_sessions/export.csv${filterQuery}`} />
      </PageHeader>
      <div className="filters" role="search" aria-label="Filter cancel sessions">
        <Filter
          label="Outcome"
          value={filters.outcome}
          options={CANCEL_OUTCOMES}
          optionLabel={cancelOutcomeLabel}
          onChange={(outcome) => setParams({ outcome })}
        />
        <Filter
          label="Reason"
          value={filters.reason_code}
          options={CANCEL_REASON_CODES}
          optionLabel={cancelReasonLabel}
          onChange={(reason_code) => setParams({ reason_code })}
        />
      </div>
      <PagedTable
        caption="Cancel sessions"
        columns={CANCEL_SESSION_COLUMNS}
        list={list}
        empty="No cancel sessions match."
        rowNames={{ one: 'cancel session', other: 'cancel sessions' }}
        stacks="titled"
      />
    </>
  );
}
