import { CANCEL_OUTCOMES, CANCEL_REASON_CODES } from '@retention/core/enums';
import { API_BASE, query } from '../api/client.js';
import type { CancelSession } from '../api/types.js';
import { CANCEL_SESSION_COLUMNS } from '../components/columns.js';
import { oneOf, UnknownFilters, useFilterState } from '../components/FilterStates.js';
import { ApiListTable, ExportLink, Filter, useShownAfterAskingNothing } from '../components/ListPage.js';
import { PageHeader } from '../components/states.js';
import { useFilters } from '../router.js';
import { cancelOutcomeLabel, cancelReasonLabel } from '../labels.js';

const FILTERS = ['outcome', 'reason_code'] as const;

/** What the list has for each filter, to say an address's value it does not have before asking. */
const CHECKS = {
  outcome: { says: 'outcome', knows: oneOf(CANCEL_OUTCOMES) },
  reason_code: { says: 'reason', knows: oneOf(CANCEL_REASON_CODES) },
};

export default function CancelSessions() {
  const [filters, setParams] = useFilters(FILTERS);
  const state = useFilterState(filters, setParams, CHECKS, 'list', { strictAddress: true });
  const filterQuery = query(filters);
  // A value the list does not have (a hand-edited address, an old bookmark) is said in its place,
  // and neither the list nor the export asks the server.
  const unknown = state.unknown.length > 0;
  const afterAskingNothing = useShownAfterAskingNothing(unknown);
  return (
    <>
      <PageHeader title="Cancel sessions">
        <ExportLink href={unknown ? null : `${API_BASE}/cancel_sessions/export.csv${filterQuery}`} />
      </PageHeader>
      <div className="filters" role="search" aria-label="Filter cancel sessions" ref={state.rowRef}>
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
      </div>
      {(unknown || state.mistakes.length > 0) && <UnknownFilters state={state} />}
      {!unknown && (
        <ApiListTable<CancelSession>
          path="/cancel_sessions"
          filters={filters}
          caption="Cancel sessions"
          columns={CANCEL_SESSION_COLUMNS}
          empty="No cancel sessions match."
          rowNames={{ one: 'cancel session', other: 'cancel sessions' }}
          stacks="titled"
          sayFirstLoad={afterAskingNothing}
          filterState={state}
        />
      )}
    </>
  );
}
