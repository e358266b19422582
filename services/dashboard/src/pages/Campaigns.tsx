import { CAMPAIGN_STATUSES, DECLINE_CATEGORIES } from '@retention/core/enums';
import { API_BASE, api, query } from '../api/client.js';
import type { Campaign, List } from '../api/types.js';
import { CAMPAIGN_COLUMNS } from '../components/columns.js';
import { DateFilter, ExportLink, Filter, PagedTable, SearchFilter } from '../components/ListPage.js';
import { PageHeader } from '../components/states.js';
import { startOfLocalDay } from '../format.js';
import { usePaged } from '../hooks.js';
import { useFilters } from '../router.js';

/**
 * The filters of the list and of its export: the address's query string, as the API names
 * them; the address keeps the days picked, the API gets the instants they start here.
 */
const FILTERS = ['status', 'decline_category', 'from', 'to', 'q'] as const;

export default function Campaigns() {
  const [filters, setParams] = useFilters(FILTERS);
  const apiFilters = { ...filters, from: startOfLocalDay(filters.from), to: startOfLocalDay(filters.to) };
  const filterQuery = query(apiFilters);
  const list = usePaged(
    (cursor) => api<List<Campaign>>('GET', `/campaigns${query({ ...apiFilters, cursor })}`),
    `campaigns${filterQuery}`,
  );
  return (
    <>
      <PageHeader title="Campaigns">
        <ExportLink href={`${API_BASE}/campaigns/export.csv${filterQuery}`} />
      </PageHeader>
      <div className="filters" role="search" aria-label="Filter campaigns">
        <SearchFilter
          label="Invoice id or customer email"
          placeholder="The whole id or address"
          value={filters.q}
          onSearch={(q) => setParams({ q })}
        />
        <Filter
          label="Status"
          value={filters.status}
          options={CAMPAIGN_STATUSES}
          onChange={(status) => setParams({ status })}
        />
        <Filter
          label="Decline category"
          value={filters.decline_category}
          options={DECLINE_CATEGORIES}
          onChange={(decline_category) => setParams({ decline_category })}
        />
        <DateFilter label="First failed from" value={filters.from} onChange={(from) => setParams({ from })} />
        <DateFilter label="First failed before" value={filters.to} onChange={(to) => setParams({ to })} />
      </div>
      <PagedTable
        caption="Recovery campaigns"
        columns={CAMPAIGN_COLUMNS}
        list={list}
        empty="No campaigns match these filters."
      />
    </>
  );
}
