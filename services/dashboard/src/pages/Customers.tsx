import { API_BASE, query } from '../api/client.js';
import type { Customer } from '../api/types.js';
import { CUSTOMER_COLUMNS } from '../components/columns.js';
import {
  ApiListTable,
  ExportLink,
  listSorting,
  noMatchSaying,
  SearchFilter,
  searchProblem,
  useListFilters,
  sortsOf,
  useShownAfterAskingNothing,
} from '../components/ListPage.js';
import { lengthProblem } from '../components/Field.js';
import { oneOf, UnknownFilters, useFilterState } from '../components/FilterStates.js';
import { PageHeader } from '../components/states.js';
import { viewerZone } from '../format.js';

/** The filters of the list and of its export, as the API names them (docs/dashboard-api.md), and their order. */
const FILTERS = ['q', 'tag', 'sort'] as const;

/** The filters typed in a box. */
const SEARCHES = ['q', 'tag'] as const;

/**
 * Both are free text, which the page cannot check for values the list does not have: what the
 * server refuses in them (a control character) is said with its reason.
 */
const CHECKS = {
  q: { says: 'the search' },
  tag: { says: 'the tag' },
  sort: { says: 'the sort', knows: oneOf(sortsOf(CUSTOMER_COLUMNS)) },
};

/** The longest tag the server looks up (`textParam('tag', …, 100)`, trimmed, in customer-list.ts). */
const TAG_LIMIT = 100;

export default function Customers() {
  const { filters, apply, search } = useListFilters(FILTERS, SEARCHES);
  const state = useFilterState(filters, apply, CHECKS, 'list', { strictAddress: true, order: ['sort'] });
  // A search under 3 characters or over 320, or a tag over 100, would be refused: said at its
  // box, and nothing is asked.
  const problem = searchProblem(filters.q);
  const tagProblem = lengthProblem(filters.tag.trim().length, TAG_LIMIT);
  // What the server refused of the address is said in place of the list (UnknownFilters).
  const refused = state.unknown.length > 0;
  const asksNothing = Boolean(problem || tagProblem || refused);
  const afterAskingNothing = useShownAfterAskingNothing(asksNothing);
  return (
    <>
      <PageHeader title="Customers">
        {/* The list and its export ask with the same filters: the address's, as applied; and the
            viewer's zone, whose today names the file (docs/dashboard-api.md, "File names"). */}
        <ExportLink
          href={asksNothing ? null : `${API_BASE}/customers/export.csv${query({ ...filters, tz: viewerZone() })}`}
        />
      </PageHeader>
      <div className="filters" role="search" aria-label="Filter customers" ref={state.rowRef}>
        <SearchFilter
          label="Search by email or name"
          buttonLabel="Search customers"
          placeholder="Part of an email or name"
          description="Part of an email or name, in any case. At least 3 characters."
          problem={problem}
          check={searchProblem}
          {...search('q')}
        />
        <SearchFilter
          label="Tag"
          placeholder="The whole tag"
          description="Matches a whole tag, not part of one."
          problem={tagProblem}
          {...search('tag')}
        />
      </div>
      {(refused || state.mistakes.length > 0) && <UnknownFilters state={state} />}
      {!asksNothing && (
        <ApiListTable<Customer>
          path="/customers"
          filters={filters}
          caption="Customers"
          columns={CUSTOMER_COLUMNS}
          empty={noMatchSaying('No customers match.', [filters.tag], 'a whole tag')}
          rowNames={{ one: 'customer', other: 'customers' }}
          stacks="titled"
          sayFirstLoad={afterAskingNothing}
          filterState={state}
          sorting={listSorting(filters.sort, '-created_at', apply)}
        />
      )}
    </>
  );
}
