import { API_BASE, api, query } from '../api/client.js';
import type { Customer, List } from '../api/types.js';
import { CUSTOMER_COLUMNS } from '../components/columns.js';
import { ExportLink, noMatchSaying, PagedTable, SearchFilter, useListFilters } from '../components/ListPage.js';
import { PageHeader } from '../components/states.js';
import { usePaged } from '../hooks.js';

export default function Customers() {
  const { filters, search } = useListFilters(['email', 'tag'] as const, ['email', 'tag']);
  // The list and its export ask with the same filters: the address's, as applied.
  const filterQuery = query(filters);
  const list = usePaged(
    (cursor) => api<List<Customer>>('GET', `/customers${query({ ...filters, cursor })}`),
    `customers${filterQuery}`,
  );
  return (
    <>
      <PageHeader title="Customers">
        <ExportLink href={`${API_BASE}/customers/export.csv${filterQuery}`} />
      </PageHeader>
      <div className="filters" role="search" aria-label="Filter customers">
        <SearchFilter
          label="Email"
          placeholder="The whole address"
          description="Matches a whole e-mail address, not part of one."
          {...search('email')}
        />
        <SearchFilter
          label="Tag"
          placeholder="The whole tag"
          description="Matches a whole tag, not part of one."
          {...search('tag')}
        />
      </div>
      <PagedTable
        caption="Customers"
        columns={CUSTOMER_COLUMNS}
        list={list}
        empty={noMatchSaying('No customers match.', [filters.email, filters.tag], 'a whole e-mail address or tag')}
        stacks="titled"
      />
    </>
  );
}
