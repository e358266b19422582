import { CANCEL_OUTCOMES, CANCEL_REASON_CODES } from '@retention/core/enums';
import { API_BASE, query } from '../api/client.js';
import type { CancelSession } from '../api/types.js';
import { CANCEL_SESSION_COLUMNS } from '../components/columns.js';
import { dayCheck, oneOf, UnknownFilters, useFilterState } from '../components/FilterStates.js';
import {
  ApiListTable,
  ExportLink,
  Filter,
  listSorting,
  SearchFilter,
  searchProblem,
  sortsOf,
  useListFilters,
  useShownAfterAskingNothing,
} from '../components/ListPage.js';
import { PageHeader } from '../components/states.js';
import { useZonedDays, ZonedDayRange } from '../components/ZonedDays.js';
import { cancelOutcomeLabel, cancelReasonLabel } from '../labels.js';

/**
 * The filters of the list and of its export, as Campaigns has them: the address keeps the days
 * picked and the zone they were picked in (`tz`), the API gets the instants they start there.
 * `sort` orders both (docs/dashboard-ui.md, "Sorting").
 */
const FILTERS = ['outcome', 'reason_code', 'from', 'to', 'q', 'tz', 'sort'] as const;

/** What the list has for each filter, to say an address's value it does not have before asking. */
const CHECKS = {
  outcome: { says: 'outcome', knows: oneOf(CANCEL_OUTCOMES) },
  reason_code: { says: 'reason', knows: oneOf(CANCEL_REASON_CODES) },
  from: dayCheck('the start day'),
  to: dayCheck('the end day'),
  q: { says: 'the search' },
  sort: { says: 'the sort', knows: oneOf(sortsOf(CANCEL_SESSION_COLUMNS)) },
};

export default function CancelSessions() {
  const { filters, apply: setParams, search } = useListFilters(FILTERS, ['q']);
  const days = useZonedDays(filters, setParams);
  const { tz: _tz, ...listed } = filters;
  const apiFilters = { ...listed, ...days.api };
  const state = useFilterState(filters, setParams, CHECKS, 'list', { strictAddress: true, order: ['sort'] });
  // Days that hold no day, or a search under 3 characters, match nothing or would be refused:
  // said at their fields, and neither the list nor the export asks the server.
  const qProblem = searchProblem(filters.q);
  // A value the list does not have (a hand-edited address, an old bookmark) is said in its place.
  const unknown = state.unknown.length > 0;
  const asksNothing = Boolean(days.problem || qProblem || unknown);
  const afterAskingNothing = useShownAfterAskingNothing(asksNothing);
  // The export names its file's days, or the day it is exported, in the days' zone (Campaigns').
  const exportHref = `${API_BASE}/cancel_sessions/export.csv${query({ ...apiFilters, tz: days.zone })}`;
  return (
    <>
      <PageHeader title="Cancel sessions">
        <ExportLink href={asksNothing ? null : exportHref} />
      </PageHeader>
      <div className="filters" role="search" aria-label="Filter cancel sessions" ref={state.rowRef}>
        <SearchFilter
          label="Search by customer email or name"
          buttonLabel="Search cancel sessions"
          placeholder="Email or name"
          description="A customer's whole email, or part of their email or name. At least 3 characters."
          problem={qProblem}
          check={searchProblem}
          {...search('q')}
        />
        <Filter
          label="Outcome"
          value={filters.outcome}
          options={CANCEL_OUTCOMES}
          optionLabel={cancelOutcomeLabel}
          onChange={(outcome) => setParams({ outcome })}
          problemId={state.fieldProblem('outcome')}
        />
        <Filter
          label="Reason"
          value={filters.reason_code}
          options={CANCEL_REASON_CODES}
          optionLabel={cancelReasonLabel}
          onChange={(reason_code) => setParams({ reason_code })}
          problemId={state.fieldProblem('reason_code')}
        />
        <ZonedDayRange
          range={days.range}
          problem={days.problem}
          fieldProblems={{ from: state.fieldProblem('from'), to: state.fieldProblem('to') }}
          labels={{ from: 'Started from', before: 'Started before' }}
          rows="cancel sessions"
          utcNote="The Overview and its charts count UTC days, so near midnight their counts can differ from this list's."
        />
      </div>
      {(unknown || state.mistakes.length > 0) && <UnknownFilters state={state} />}
      {!asksNothing && (
        <ApiListTable<CancelSession>
          path="/cancel_sessions"
          filters={apiFilters}
          caption="Cancel sessions"
          columns={CANCEL_SESSION_COLUMNS}
          empty="No cancel sessions match."
          rowNames={{ one: 'cancel session', other: 'cancel sessions' }}
          stacks="titled"
          sayFirstLoad={afterAskingNothing}
          filterState={state}
          sorting={listSorting(filters.sort, '-created_at', setParams)}
        />
      )}
    </>
  );
}
