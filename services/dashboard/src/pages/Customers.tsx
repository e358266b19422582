import { api, query } from '../api/client.js';
import type { Customer, List } from '../api/types.js';
import { CUSTOMER_COLUMNS } from '../components/columns.js';
import { noMatchSaying, PagedTable, SearchFilter, useListFilters } from '../components/ListPage.js';
import { PageHeader } from '../components/states.js';
import { usePaged } from '../hooks.js';

export default function Customers() {
  const { filters, search } = useListFilters(['email', 'tag'] as const, ['email', 'tag']);
  const list = usePaged(
    (cursor) => api<List<Customer>>('GET', `/customers${query({ ...filters, cursor })}`),
    `customers${query(filters)}`,
  );
  return (
    <>
      <PageHeader title="Customers" />
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
