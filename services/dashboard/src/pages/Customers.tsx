import { api, query } from '../api/client.js';
import type { Customer, List } from '../api/types.js';
import { CUSTOMER_COLUMNS } from '../components/columns.js';
import { PagedTable, SearchFilter } from '../components/ListPage.js';
import { PageHeader } from '../components/states.js';
import { usePaged } from '../hooks.js';
import { useFilters } from '../router.js';

export default function Customers() {
  const [filters, setParams] = useFilters(['email', 'tag'] as const);
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
          value={filters.email}
          onSearch={(email) => setParams({ email })}
        />
        <SearchFilter
          label="Tag"
          placeholder="The whole tag"
          value={filters.tag}
          onSearch={(tag) => setParams({ tag })}
        />
      </div>
      <PagedTable caption="Customers" columns={CUSTOMER_COLUMNS} list={list} empty="No customers match." />
    </>
  );
}
