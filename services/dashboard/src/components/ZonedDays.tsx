import { useEffect, useState, type ReactNode } from 'react';
import { daysAreUtc, knownZone, startOfDayIn, viewerZone } from '../format.js';
import type { AddressChange } from '../router.js';
import { DayRangeFilter, emptyDayRange } from './ListPage.js';

/**
 * A list's filter by days of one named zone (docs/dashboard-ui.md, "Campaign date filters"; the
 * Campaigns list and the Security log): the address keeps the days picked (`from`, and `to`, the
 * day after the last) and the zone they were picked in (`tz`), the API gets the instants they
 * start there.
 */
export interface DayParams {
  from: string;
  to: string;
  tz: string;
}

/**
 * The zone the days are in: the address's `tz` when this browser knows it, else the viewer's. So
 * a link lists the same rows to everyone who opens it; `fromLink` when its zone is not the
 * viewer's, `unknown` when the address named a zone this browser does not know.
 */
function dayZoneOf(tz: string) {
  const viewer = viewerZone();
  const linked = tz ? knownZone(tz) : null;
  const zone = linked ?? viewer;
  return { zone, viewer, fromLink: zone !== viewer, unknown: tz !== '' && linked === null };
}

/**
 * The days of a list's address, in their zone: the API's `from` and `to` (the instants the days
 * start in the zone), why the days hold no day (emptyDayRange), and the props of ZonedDayRange.
 * `setParams` replaces the given filters in the address.
 */
export function useZonedDays(days: DayParams, setParams: (next: Partial<DayParams>, change?: AddressChange) => void) {
  const hasDays = Boolean(days.from || days.to);
  // A zone without days filters nothing: the next day picked is the viewer's.
  const asked = hasDays ? days.tz : '';
  const dayZone = dayZoneOf(asked);
  const { zone } = dayZone;
  /**
   * A zone the address named that this browser does not know, replaced there by the viewer's:
   * the note saying so stays for this page view while the address has days, until a day is
   * picked or cleared. Without days (Clear filters empties the address) it is about nothing.
   */
  const [unknownAsked, setUnknownAsked] = useState<string | null>(null);
  // An address with days and no zone (typed, or shared before the zone was kept), or with a zone
  // this browser does not know: its days are the viewer's, and the address now says so, for a
  // link copied from it. A correction, not a change of the reader's: it replaces the history
  // entry, so Back does not land on the address without the zone, only to see it filled in again.
  useEffect(() => {
    if (!hasDays) return;
    if (dayZone.unknown) setUnknownAsked(days.tz);
    if (!days.tz || dayZone.unknown) setParams({ tz: zone }, { replace: true });
  }, [hasDays, days.tz]);
  /**
   * A day picked: the address keeps the zone it was picked in (none once both days are cleared).
   * A date field changes as it is typed in (each digit of the year, each arrow key): one history
   * entry per burst of changes to the same field (router.tsx, AddressChange).
   */
  const setDay = (next: { from: string } | { to: string }) => {
    const picked = { from: days.from, to: days.to, ...next };
    setUnknownAsked(null);
    setParams({ ...next, tz: picked.from || picked.to ? zone : '' }, { burst: 'from' in next ? 'from' : 'to' });
  };
  const notes =
    unknownAsked !== null && hasDays && !dayZone.unknown && !dayZone.fromLink
      ? { ...dayZone, unknown: true, asked: unknownAsked }
      : { ...dayZone, asked };
  return {
    zone,
    /** The API's `from` and `to`: the instants the days start in the zone. */
    api: { from: startOfDayIn(days.from, zone), to: startOfDayIn(days.to, zone) },
    /** Days that hold no day match nothing: said under the fields, and the server is not asked. */
    problem: emptyDayRange(days.from, days.to),
    range: { days, zone, notes, setDay, onUseMine: () => setParams({ tz: dayZone.viewer }) },
  };
}

/**
 * The from–before day fields of a list (DayRangeFilter) with what is said under them about their
 * zone: a link's zone that is not the viewer's, with a button to use the viewer's; an address's
 * zone this browser does not know; and `utcNote`, where the zone's days are not UTC's (the
 * Campaigns list: the Overview counts UTC days). `rows` names the list's rows ("campaigns");
 * `after` goes on the fields' line, after them.
 */
export function ZonedDayRange({
  range,
  problem,
  fieldProblems = {},
  labels,
  rows,
  utcNote,
  after,
}: {
  range: ReturnType<typeof useZonedDays>['range'];
  problem: string | null;
  /** The ids of what says a day of the address is not one (FilterStates' `fieldProblem`). */
  fieldProblems?: { from?: string | undefined; to?: string | undefined };
  labels: { from: string; before: string };
  rows: string;
  utcNote?: string;
  after?: ReactNode;
}) {
  const { days, zone, notes, setDay, onUseMine } = range;
  const { viewer, fromLink, unknown, asked } = notes;
  return (
    <DayRangeFilter
      from={{
        label: labels.from,
        value: days.from,
        onChange: (from) => setDay({ from }),
        problemId: fieldProblems.from,
      }}
      before={{ label: labels.before, value: days.to, onChange: (to) => setDay({ to }), problemId: fieldProblems.to }}
      problem={problem}
      zone={zone}
      after={after}
      notes={
        <>
          {fromLink && (
            <div className="notice zone-note" role="note">
              <p>
                This link's days are in {zone} time, so everyone who opens it sees the same {rows}; the list's dates are
                in your time zone, {viewer}.
              </p>
              <button type="button" className="button small" onClick={onUseMine}>
                Use my time zone ({viewer})
              </button>
            </div>
          )}
          {unknown && (
            <p className="notice zone-note" role="note">
              The link's time zone "{asked}" is not one this browser knows, so the days are in your time zone, {viewer}.
            </p>
          )}
          {utcNote && !daysAreUtc(zone) && <p className="hint">{utcNote}</p>}
        </>
      }
    />
  );
}
