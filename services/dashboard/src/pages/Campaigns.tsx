import { useEffect, useState } from 'react';
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
import { daysAreUtc, knownZone, startOfDayIn, viewerZone } from '../format.js';
import { usePaged } from '../hooks.js';

/**
 * The filters of the list and of its export: the address's query string, as the API names
 * them; the address keeps the days picked and the zone they were picked in (`tz`), the API gets
 * the instants they start there.
 */
const FILTERS = ['status', 'decline_category', 'from', 'to', 'q', 'tz'] as const;

type Filters = Record<(typeof FILTERS)[number], string>;

/**
 * The zone the days are in (docs/dashboard-ui.md, "Campaign date filters"): the address's `tz`
 * when this browser knows it, else the viewer's. So a link lists the same campaigns to
 * everyone who opens it; `fromLink` when its zone is not the viewer's, `unknown` when the
 * address named a zone this browser does not know.
 */
function dayZoneOf(tz: string) {
  const viewer = viewerZone();
  const linked = tz ? knownZone(tz) : null;
  const zone = linked ?? viewer;
  return { zone, viewer, fromLink: zone !== viewer, unknown: tz !== '' && linked === null };
}

/** The list's API filters for the address's: days become the instants they start in `zone`. */
function apiFiltersOf({ tz: _tz, ...filters }: Filters, zone: string) {
  return { ...filters, from: startOfDayIn(filters.from, zone), to: startOfDayIn(filters.to, zone) };
}

/** The export's: the list's, and the zone of its days, which names the file's days (docs/dashboard-api.md). */
function exportFiltersOf(filters: Filters, zone: string) {
  return { ...apiFiltersOf(filters, zone), tz: filters.from || filters.to ? zone : '' };
}

/** Under the box: what it finds, and the shortest search the server takes. */
const SEARCHES = "A whole invoice id, or part of a customer's email or name. At least 3 characters.";

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

/**
 * What the page says under the date fields about their zone: a link's zone that is not the
 * viewer's, with a button to use the viewer's; an address's zone this browser does not know;
 * and, where the days are not UTC's, that the Overview counts UTC days.
 */
function ZoneNotes({
  zone,
  viewer,
  fromLink,
  unknown,
  asked,
  onUseMine,
}: ReturnType<typeof dayZoneOf> & { asked: string; onUseMine: () => void }) {
  return (
    <>
      {fromLink && (
        <div className="notice zone-note" role="note">
          <p>
            This link's days are in {zone} time, so everyone who opens it sees the same campaigns; the list's dates are
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
      {!daysAreUtc(zone) && (
        <p className="hint">
          The Overview and its charts count UTC days, so near midnight their counts can differ from this list's.
        </p>
      )}
    </>
  );
}

export default function Campaigns() {
  const { filters, apply: setParams, search } = useListFilters(FILTERS, ['q']);
  const hasDays = Boolean(filters.from || filters.to);
  // A zone without days filters nothing: the next day picked is the viewer's.
  const asked = hasDays ? filters.tz : '';
  const dayZone = dayZoneOf(asked);
  const { zone } = dayZone;
  const apiFilters = apiFiltersOf(filters, zone);
  /**
   * A zone the address named that this browser does not know, replaced there by the viewer's:
   * the note saying so stays for this page view, until a day is picked or cleared.
   */
  const [unknownAsked, setUnknownAsked] = useState<string | null>(null);
  // An address with days and no zone (typed, or shared before the zone was kept), or with a zone
  // this browser does not know: its days are the viewer's, and the address now says so, for a
  // link copied from it.
  useEffect(() => {
    if (!hasDays) return;
    if (dayZone.unknown) setUnknownAsked(filters.tz);
    if (!filters.tz || dayZone.unknown) setParams({ tz: zone });
  }, [hasDays, filters.tz]);
  /** A day picked: the address keeps the zone it was picked in (none once both days are cleared). */
  const setDay = (next: { from: string } | { to: string }) => {
    const days = { from: filters.from, to: filters.to, ...next };
    setUnknownAsked(null);
    setParams({ ...next, tz: days.from || days.to ? zone : '' });
  };
  const notes =
    unknownAsked !== null && !dayZone.unknown && !dayZone.fromLink
      ? { ...dayZone, unknown: true, asked: unknownAsked }
      : { ...dayZone, asked };
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
        <ExportLink
          href={asksNothing ? null : `${API_BASE}/campaigns/export.csv${query(exportFiltersOf(filters, zone))}`}
        />
      </PageHeader>
      <div className="filters" role="search" aria-label="Filter campaigns">
        <SearchFilter
          label="Search by invoice id, customer email or name"
          buttonLabel="Search campaigns"
          placeholder="Invoice id, email or name"
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
          from={{ label: 'First failed from', value: filters.from, onChange: (from) => setDay({ from }) }}
          before={{ label: 'First failed before', value: filters.to, onChange: (to) => setDay({ to }) }}
          problem={rangeProblem}
          zone={zone}
          notes={<ZoneNotes {...notes} onUseMine={() => setParams({ tz: dayZone.viewer })} />}
        />
      </div>
      {!asksNothing && <CampaignTable apiFilters={apiFilters} sayFirstLoad={afterAskingNothing} />}
    </>
  );
}
