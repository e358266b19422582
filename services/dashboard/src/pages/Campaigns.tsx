import { CAMPAIGN_STATUSES, DECLINE_CATEGORIES } from '@retention/core/enums';
import { API_BASE, query } from '../api/client.js';
import type { Campaign } from '../api/types.js';
import { CAMPAIGN_COLUMNS } from '../components/columns.js';
import {
  ApiListTable,
  ExportLink,
  Filter,
  listSorting,
  SearchFilter,
  searchProblem,
  useListFilters,
  sortsOf,
  useShownAfterAskingNothing,
} from '../components/ListPage.js';
import { dayCheck, oneOf, UnknownFilters, useFilterState } from '../components/FilterStates.js';
import { PageHeader } from '../components/states.js';
import { AmountFilter } from '../components/AmountFilter.js';
import { amountChecks, currencyCode } from '../amount-address.js';
import { useSession } from '../session.js';
import { useZonedDays, ZonedDayRange } from '../components/ZonedDays.js';
import { campaignStatusLabel, declineCategoryLabel } from '../labels.js';

/**
 * The filters of the list and of its export: the address's query string, as the API names
 * them; the address keeps the days picked and the zone they were picked in (`tz`), the API gets
 * the instants they start there. `sort` orders both (docs/dashboard-ui.md, "Sorting").
 */
const FILTERS = [
  'status',
  'decline_category',
  'from',
  'to',
  'q',
  'currency',
  'min_amount',
  'max_amount',
  'tz',
  'sort',
] as const;

/** The list's order without a `sort`: newest first failure first. */
const DEFAULT_SORT = '-first_failed_at';

type Filters = Record<(typeof FILTERS)[number], string>;

/** The list's API filters: the address's, with its days as the instants they start in their zone. */
type ApiFilters = Omit<Filters, 'tz'>;

/**
 * The export's: the list's, and the zone of its days, which names the file's days, or without
 * days the day it is exported, as the viewer's calendar has it (docs/dashboard-api.md, "File names").
 */
function exportFiltersOf(apiFilters: ApiFilters, zone: string) {
  return { ...apiFilters, tz: zone };
}

/** What the list has for each filter, to say an address's value it does not have before asking. */
const CHECKS = {
  status: { says: 'status', knows: oneOf(CAMPAIGN_STATUSES) },
  decline_category: { says: 'decline category', knows: oneOf(DECLINE_CATEGORIES) },
  from: dayCheck('the start day'),
  to: dayCheck('the end day'),
  q: { says: 'the search' },
  sort: { says: 'the sort', knows: oneOf(sortsOf(CAMPAIGN_COLUMNS)) },
};

/**
 * Under the box: what it finds, and the shortest search the server takes. An invoice id is found
 * by its start from `in_` and 4 more characters (INVOICE_PREFIX in packages/db, docs/dashboard-api.md).
 */
const SEARCHES =
  "An invoice id or its first characters (in_ and at least 4 more), or at least 3 characters of a customer's email or name.";

/**
 * A search that looks like the start of an invoice id too short to be looked up as one (`in_`
 * and 1 to 3 characters): it finds only emails and names holding it, so a list of none says to
 * type more of the id.
 */
const SHORT_INVOICE_START = /^in_\S{1,3}$/;

function emptySentence(q: string): string {
  return SHORT_INVOICE_START.test(q.trim())
    ? 'No campaigns match these filters. To find an invoice by the start of its id, type in_ and at least 4 more characters.'
    : 'No campaigns match these filters.';
}

export default function Campaigns() {
  const { filters, apply: setParams, search } = useListFilters(FILTERS, ['q']);
  const displayCurrency = useSession().me.workspace.display_currency;
  const days = useZonedDays(filters, setParams);
  const { tz: _tz, ...listed } = filters;
  // The address's currency in any case (`JPY`); the page and the API get the stored code (`jpy`).
  const currency = currencyCode(filters.currency);
  const apiFilters: ApiFilters = { ...listed, ...days.api, currency };
  const checks = { ...CHECKS, ...amountChecks(filters) };
  const state = useFilterState(filters, setParams, checks, 'list', { strictAddress: true, order: ['sort'] });
  // Days that hold no day match nothing: the hint under the fields says why, and neither the
  // list nor the export asks the server.
  const rangeProblem = days.problem;
  // A search under 3 characters would be refused: said at the box, and nothing is asked.
  const qProblem = searchProblem(filters.q);
  // A value the list does not have (a hand-edited address, an old bookmark) is said in its place.
  const unknown = state.unknown.length > 0;
  const asksNothing = Boolean(rangeProblem || qProblem || unknown);
  const afterAskingNothing = useShownAfterAskingNothing(asksNothing);
  return (
    <>
      <PageHeader title="Campaigns">
        <ExportLink
          href={asksNothing ? null : `${API_BASE}/campaigns/export.csv${query(exportFiltersOf(apiFilters, days.zone))}`}
        />
      </PageHeader>
      <div className="filters" role="search" aria-label="Filter campaigns" ref={state.rowRef}>
        <SearchFilter
          label="Search by invoice id, customer email or name"
          buttonLabel="Search campaigns"
          placeholder="Invoice id, email or name"
          description={SEARCHES}
          problem={qProblem}
          check={searchProblem}
          {...search('q')}
        />
        <Filter
          label="Status"
          value={filters.status}
          options={CAMPAIGN_STATUSES}
          optionLabel={campaignStatusLabel}
          onChange={(status) => setParams({ status })}
          problemId={state.fieldProblem('status')}
        />
        <Filter
          label="Decline category"
          value={filters.decline_category}
          options={DECLINE_CATEGORIES}
          optionLabel={declineCategoryLabel}
          onChange={(decline_category) => setParams({ decline_category })}
          problemId={state.fieldProblem('decline_category')}
        />
        <AmountFilter
          applied={{ currency, min_amount: filters.min_amount, max_amount: filters.max_amount }}
          displayCurrency={displayCurrency}
          onApply={(amounts) => setParams(amounts)}
          problemIds={{
            currency: state.fieldProblem('currency'),
            min_amount: state.fieldProblem('min_amount'),
            max_amount: state.fieldProblem('max_amount'),
          }}
        />
        <ZonedDayRange
          range={days.range}
          problem={rangeProblem}
          fieldProblems={{ from: state.fieldProblem('from'), to: state.fieldProblem('to') }}
          labels={{ from: 'First failed from', before: 'First failed before' }}
          rows="campaigns"
          utcNote="The Overview and its charts count UTC days, so near midnight their counts can differ from this list's."
        />
      </div>
      {(unknown || state.mistakes.length > 0) && <UnknownFilters state={state} />}
      {!asksNothing && (
        <ApiListTable<Campaign>
          path="/campaigns"
          filters={apiFilters}
          caption="Recovery campaigns"
          columns={CAMPAIGN_COLUMNS}
          empty={emptySentence(filters.q)}
          rowNames={{ one: 'campaign', other: 'campaigns' }}
          stacks="titled"
          sayFirstLoad={afterAskingNothing}
          filterState={state}
          sorting={listSorting(filters.sort, DEFAULT_SORT, setParams)}
        />
      )}
    </>
  );
}
