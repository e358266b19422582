import { CAMPAIGN_STATUSES, DECLINE_CATEGORIES } from '@retention/core/enums';
import { API_BASE, api, query } from '../api/client.js';
import type { Campaign, List } from '../api/types.js';
import { CAMPAIGN_COLUMNS } from '../components/columns.js';
import {
  DayRangeFilter,
  emptyDayRange,
  ExportLink,
  Filter,
  PagedTable,
  SearchFilter,
  searchProblem,
  useListFilters,
  useShownAfterAskingNothing,
} from '../components/ListPage.js';
import { PageHeader } from '../components/states.js';
import { startOfLocalDay } from '../format.js';
import { usePaged } from '../hooks.js';

/**
 * The filters of the list and of its export: the address's query string, as the API names
 * them; the address keeps the days picked, the API gets the instants they start here.
 */
const FILTERS = ['status', 'decline_category', 'from', 'to', 'q'] as const;

/** The API's filters for the address's: days become the instants they start in the viewer's zone. */
function apiFiltersOf(filters: Record<(typeof FILTERS)[number], string>) {
  return { ...filters, from: startOfLocalDay(filters.from), to: startOfLocalDay(filters.to) };
}

/** Under the box: what it finds, and the shortest search the server takes. */
const SEARCHES = "A whole invoice id, or part of a customer's e-mail or name. At least 3 characters.";

function CampaignTable({
  apiFilters,
  sayFirstLoad,
}: {
  apiFilters: ReturnType<typeof apiFiltersOf>;
  sayFirstLoad: boolean;
}) {
  const list = usePaged(
    (cursor) => api<List<Campaign>>('GET', `/campaigns${query({ ...apiFilters, cursor })}`),
    `campaigns${query(apiFilters)}`,
  );
  return (
    <PagedTable
      caption="Recovery campaigns"
      columns={CAMPAIGN_COLUMNS}
      list={list}
      empty="No campaigns match these filters."
      rowNames={{ one: 'campaign', other: 'campaigns' }}
      stacks="titled"
      sayFirstLoad={sayFirstLoad}
    />
  );
}

export default function Campaigns() {
  const { filters, apply: setParams, search } = useListFilters(FILTERS, ['q']);
  const apiFilters = apiFiltersOf(filters);
  // Days that hold no day match nothing: the hint under the fields says why, and neither the
  // list nor the export asks the server.
  const rangeProblem = emptyDayRange(filters.from, filters.to);
  // A search under 3 characters would be refused: said at the box, and nothing is asked.
  const qProblem = searchProblem(filters.q);
  const asksNothing = Boolean(rangeProblem || qProblem);
  const afterAskingNothing = useShownAfterAskingNothing(asksNothing);
  return (
    <>
      <PageHeader title="Campaigns">
        <ExportLink href={asksNothing ? null : `${API_BASE}/campaigns/export.csv${query(apiFilters)}`} />
      </PageHeader>
      <div className="filters" role="search" aria-label="Filter campaigns">
        <SearchFilter
          label="Search by invoice id, customer e-mail or name"
          buttonLabel="Search campaigns"
          placeholder="Invoice id, e-mail or name"
          description={SEARCHES}
          problem={qProblem}
          {...search('q')}
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
        <DayRangeFilter
          from={{ label: 'First failed from', value: filters.from, onChange: (from) => setParams({ from }) }}
          before={{ label: 'First failed before', value: filters.to, onChange: (to) => setParams({ to }) }}
          problem={rangeProblem}
        />
      </div>
      {!asksNothing && <CampaignTable apiFilters={apiFilters} sayFirstLoad={afterAskingNothing} />}
    </>
  );
}
