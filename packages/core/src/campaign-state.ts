import type { CampaignStatus, RecoveredVia } from './enums.js';

/**
 * What a campaign's status says of its closing fields: the one statement of the rule. The
 * closing actions build their rows with `closingFields`, the fixture loader fills and checks
 * files with both, and the database holds the same rule in migrations 0003 and 0008
 * (`packages/db/test/campaign-state-checks.test.ts` proves the two agree, row by row).
 *
 * - `in_flight`: open; no close time, no recovery.
 * - `recovered`: closed, recovered when it closed (`recovered_at = closed_at`), with a route.
 * - `lost`, `abandoned`: closed without recovery.
 * Any close is at or after the first failure.
 */
export const CAMPAIGN_STATES: Readonly<Record<CampaignStatus, { closed: boolean; recovered: boolean }>> = {
  in_flight: { closed: false, recovered: false },
  recovered: { closed: true, recovered: true },
  lost: { closed: true, recovered: false },
  abandoned: { closed: true, recovered: false },
};

export interface ClosingFields<T> {
  recovered_via: RecoveredVia | null;
  recovered_at: T | null;
  closed_at: T | null;
}

/**
 * The closing fields of a campaign entering `status` at `at` (a Date, or the database's clock
 * as a knex expression): a recovery keeps its route, a close without recovery has none.
 */
export function closingFields<T>(status: CampaignStatus, at: T, via: RecoveredVia | null): ClosingFields<T> {
  const state = CAMPAIGN_STATES[status];
  return {
    recovered_via: state.recovered ? via : null,
    recovered_at: state.recovered ? at : null,
    closed_at: state.closed ? at : null,
  };
}
