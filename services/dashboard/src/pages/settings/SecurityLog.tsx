import { api, query } from '../../api/client.js';
import { useId, useMemo } from 'react';
import type { List, Me, SecurityEvent, User } from '../../api/types.js';
import { useTeamMembers } from '../../components/ActorName.js';
import {
  Clipped,
  Filter,
  PagedTable,
  showsNothing,
  useShownAfterAskingNothing,
  type Column,
  type FilterGroup,
  type FilterOption,
} from '../../components/ListPage.js';
import {
  ClearFilters,
  dayCheck,
  UnknownFilters,
  useFilterState,
  type FilterCheck,
  type FilterState,
} from '../../components/FilterStates.js';
import { PageHeader } from '../../components/states.js';
import { Time } from '../../components/Time.js';
import { useZonedDays, ZonedDayRange } from '../../components/ZonedDays.js';
import { usePaged, type Paged } from '../../hooks.js';
import { SecurityActionName } from '../../components/Labels.js';
import { BreakableEmail, BreakAfterSeparators } from '../../components/BreakableUrl.js';
import {
  clientAddressLabel,
  SECURITY_ACTION_GROUPS,
  SECURITY_ACTOR_KIND_LABELS,
  securityActionLabel,
  securityTargetText,
} from '../../labels.js';
import { Link, useFilters } from '../../router.js';
import { useSession } from '../../session.js';
import { securityDetailsText } from '../../security-details.js';

/**
 * A target's text, breaking where its kind of label reads best when the column is narrow: an
 * endpoint's URL after its separators, a person's or an invitation's email after `@` and `.`. A
 * campaign's invoice id (`in_1Q2w3E4r…`) is one unit: whole on the next line when it does not fit
 * beside "Campaign:", and after its `in_` only when it is longer than a line (a 390 px card).
 * Breaking after separators as a URL does split it after `in_` where it would have fit whole. Any
 * other label (a token's name) breaks at its spaces. A word too long for its line still breaks
 * anywhere (`.security-target`, a stacked cell), as a last resort.
 */
function TargetText({ type, text }: { type: string; text: string }) {
  if (type === 'webhook_endpoint') return <BreakAfterSeparators text={text} />;
  if (type === 'user' || type === 'invitation') return <BreakableEmail email={text} />;
  const id = type === 'campaign' ? /^(.*: )([a-z]+_)(.+)$/.exec(text) : null;
  if (!id) return <>{text}</>;
  const [, prefix, idKind, idRest] = id;
  return (
    <>
      {prefix}
      <span className="whole-id">
        {idKind}
        <wbr />
        {idRest}
      </span>
    </>
  );
}

/**
 * The page of what an entry changed, for its link, as the dashboard's pages show it: an endpoint's
 * own page, a campaign's, the API tokens list for a token, Team for a person or a pending
 * invitation, Workspace, Processor. None when it is gone (`exists`: an endpoint deleted, someone
 * removed, an invitation accepted or canceled) or its page is not for the viewer's role (Processor
 * is the owners'): the text is then plain.
 */
function targetPage(target: NonNullable<SecurityEvent['target']>, permissions: Me['permissions']): string | null {
  if (!target.exists) return null;
  const id = encodeURIComponent(target.id);
  switch (target.type) {
    case 'webhook_endpoint':
      return `/settings/webhooks/${id}`;
    case 'campaign':
      return `/campaigns/${id}`;
    case 'api_token':
      return permissions.read_tokens ? '/settings/tokens' : null;
    case 'user':
    case 'invitation':
      return '/settings/team';
    case 'workspace':
      return '/settings/workspace';
    case 'processor_connection':
      return permissions.manage_processor ? '/settings/processor' : null;
    default:
      return null;
  }
}

/**
 * What an entry changed: its target (on up to two lines at 1280 px, breaking as TargetText says,
 * then clipped; whole on hover), and under it what the change was ("Member → Admin",
 * "Display currency: USD → EUR"), wrapping rather than clipped: it is the part read whole. Plain
 * text, never markup (names and URLs are what people typed).
 */
function WhatChanged({ event, permissions }: { event: SecurityEvent; permissions: Me['permissions'] }) {
  const details = securityDetailsText(event.action, event.details, event.target);
  const target = event.target && securityTargetText(event.target);
  const page = event.target && targetPage(event.target, permissions);
  const text = event.target && target && <TargetText type={event.target.type} text={target} />;
  return (
    <>
      {/* The link is the clipped target itself: cut as the text was, whole in its title. */}
      {page ? (
        <Link to={page} className="clip security-target" title={target ?? undefined}>
          {text}
        </Link>
      ) : (
        <Clipped className="security-target" text={target}>
          {text}
        </Clipped>
      )}
      {details.length > 0 && <span className="security-details">{details.join(' · ')}</span>}
    </>
  );
}

/**
 * Who made a change, named as the Who filter names them: a person on the team by their name, the
 * email the entry recorded under it in smaller text; the email alone for someone without a name
 * or no longer on the team (their entries keep the email, not the id). The operator CLI run with
 * `--actor` names the person it was run for the same way, "via operator CLI" under it (their
 * email when they have no name, or once they have left: the entry keeps it, migration 0040; the
 * label alone for entries from before that of someone who had left by then). Any other actor by its label ("Demo setup", "stripe", "operator CLI"). The names come from
 * GET /team, which the page reads for the filter: an entry carries the id and the email only.
 * A space between the two lines, so that they are read "Jane Doe via operator CLI".
 */
function Who({ actor, members }: { actor: SecurityEvent['actor']; members: ReadonlyMap<string, User> }) {
  const person = actor.user_id ? members.get(actor.user_id) : undefined;
  const forWhom = person ? person.name || person.email : actor.email;
  if (actor.type === 'operator' && forWhom) {
    return (
      <>
        <Clipped text={forWhom} /> <span className="secondary">via {actor.label}</span>
      </>
    );
  }
  if (actor.type === 'user' && person?.name) {
    return (
      <>
        <Clipped text={person.name} /> <Clipped className="secondary" text={actor.label} />
      </>
    );
  }
  return <Clipped text={actor.label} />;
}

/**
 * Where a change came from, short ("This machine (::1)", an address as it is), on two lines where
 * it is longer (an IPv6 address); what a loopback address means in full ("This machine or a proxy
 * on it (::1)") on hover and, in place of the short words, for screen readers.
 */
function From({ ip }: { ip: string }) {
  const { shown, whole } = clientAddressLabel(ip);
  if (shown === whole) return <span className="security-from">{ip}</span>;
  return (
    <span className="security-from">
      <span aria-hidden="true" title={whole}>
        {shown}
      </span>
      <span className="visually-hidden">{whole}</span>
    </span>
  );
}

/**
 * What, the part of an entry read, takes most of the row at 1280 px; Action, Who and From are
 * narrow, on two short lines each where they need them, as What is two lines (its target and
 * details) anyway (docs/dashboard-ui.md, "Security log columns"; styles.css).
 */
const columns = (members: ReadonlyMap<string, User>, permissions: Me['permissions']): Column<SecurityEvent>[] => [
  { header: 'When', cell: (row) => <Time value={row.created_at} short withTime /> },
  {
    header: 'Action',
    cell: (row) => (
      <span className="security-action">
        <SecurityActionName action={row.action} />
      </span>
    ),
  },
  {
    header: 'Who',
    cell: (row) => (
      <span className="security-who">
        <Who actor={row.actor} members={members} />
      </span>
    ),
  },
  { header: 'What', cell: (row) => <WhatChanged event={row} permissions={permissions} />, fill: true },
  { header: 'From', cell: (row) => (row.ip_address ? <From ip={row.ip_address} /> : '—') },
];

/**
 * The log's filters in the address, as the API names them (docs/dashboard-api.md, "Security
 * log"): `action` (a comma-separated list: one action, or a group's), `actor` (a person's id, or
 * `operator`, `processor`, `system`), and days as on Campaigns (`from`, `to`, the zone `tz`).
 */
const FILTERS = ['action', 'actor', 'from', 'to', 'tz'] as const;

/** Every action in the order the groups list them, for reading an address's list in that order. */
const ACTION_ORDER = SECURITY_ACTION_GROUPS.flatMap((group) => group.actions as readonly string[]);

/**
 * The Action select's options: "All actions", then each group under its heading, "Any …" (its
 * actions as one comma-separated value) before the group's actions one by one.
 */
const ACTION_OPTIONS: (FilterOption | FilterGroup)[] = [
  { value: '', label: 'All actions' },
  ...SECURITY_ACTION_GROUPS.map(({ group, any, actions }) => ({
    group,
    options: [
      ...(any ? [{ value: actions.join(','), label: any }] : []),
      ...actions.map((action) => ({ value: action, label: securityActionLabel(action) })),
    ],
  })),
];
/** The values the Action select offers: every action, each group's list, and none. */
const OFFERED_ACTIONS = new Set([
  '',
  ...SECURITY_ACTION_GROUPS.flatMap(({ any, actions }) => [...(any ? [actions.join(',')] : []), ...actions]),
]);

/**
 * An address's `action` as the select names it: its actions each once in the groups' order, so
 * `token.revoked,token.created,token.limit_changed` is the API tokens group as the select has it.
 * A name it does not know is kept, for the API to refuse.
 */
function actionValue(action: string): string {
  const names = [...new Set(action.split(','))];
  if (names.some((name) => !ACTION_ORDER.includes(name))) return action;
  return names.sort((a, b) => ACTION_ORDER.indexOf(a) - ACTION_ORDER.indexOf(b)).join(',');
}

/**
 * The actions of an address's `action` the select does not offer (a list edited by hand, a
 * link), in words; none when the select offers it, or when it names an action the log does not
 * have (said in place of the log; the select shows the value as it is).
 */
function chosenActions(action: string): string[] {
  const names = action.split(',');
  if (OFFERED_ACTIONS.has(action) || !names.every((name) => ACTION_ORDER.includes(name))) return [];
  return names.map(securityActionLabel);
}

/** The longest summary of chosen actions the select shows whole at its widest (17rem). */
const SUMMARY_CHARACTERS = 36;

/**
 * Chosen actions as the select can show them: all of them where they fit ("API token created, API
 * token revoked"), else as many as fit and how many more ("API token created and 2 more"), and
 * always the first; `whole` when none is left out. "2 chosen actions" did not say which.
 */
function actionsSummary(labels: readonly string[]): { text: string; whole: boolean } {
  const all = labels.join(', ');
  if (all.length <= SUMMARY_CHARACTERS) return { text: all, whole: true };
  let shown = 1;
  const upTo = (count: number) => `${labels.slice(0, count).join(', ')} and ${labels.length - count} more`;
  while (shown + 1 < labels.length && upTo(shown + 1).length <= SUMMARY_CHARACTERS) shown += 1;
  return { text: upTo(shown), whole: false };
}

/**
 * The Who select's options after "Anyone": the team by name (the email for someone without one,
 * and beside the name where two share it), then the actors that are no one on the team.
 */
function whoOptions(members: ReadonlyMap<string, User>): FilterGroup[] {
  const people = [...members.values()].sort((a, b) => (a.name || a.email).localeCompare(b.name || b.email));
  const named = (person: User) => {
    const name = person.name || person.email;
    const shared = person.name && people.some((other) => other !== person && other.name === person.name);
    return shared ? `${name} (${person.email})` : name;
  };
  // No empty Team heading while the team is read.
  const team =
    people.length > 0 ? [{ group: 'Team', options: people.map((p) => ({ value: p.id, label: named(p) })) }] : [];
  return [...team, { group: 'Not a person', options: SECURITY_ACTOR_KIND_LABELS }];
}

/**
 * What the log has for each filter, to say an address's value it does not have before asking.
 * Someone not on the team is known only once the team is read (`teamRead`): until then the log
 * asks, and the server's refusal says the same.
 */
function checksOf(members: ReadonlyMap<string, User>): Partial<Record<(typeof FILTERS)[number], FilterCheck>> {
  const teamRead = members.size > 0;
  const isActor = (actor: string) => {
    const id = actor.toLowerCase();
    return SECURITY_ACTOR_KIND_LABELS.some((kind) => kind.value === id) || !teamRead || members.has(id);
  };
  return {
    action: { says: 'action', knows: (name) => ACTION_ORDER.includes(name), commaList: true },
    actor: { says: 'changes by', knows: isActor, because: "who is not on this workspace's team" },
    from: dayCheck('the start day'),
    to: dayCheck('the end day'),
  };
}

function SecurityLogTable({
  list,
  members,
  filterState,
  sayFirstLoad,
}: {
  list: Paged<SecurityEvent>;
  members: ReadonlyMap<string, User>;
  filterState: FilterState;
  sayFirstLoad: boolean;
}) {
  const { me } = useSession();
  const tableColumns = useMemo(() => columns(members, me.permissions), [members, me.permissions]);
  return (
    <PagedTable
      caption="Security log"
      columns={tableColumns}
      list={list}
      empty={filterState.anySet ? 'No entries match these filters.' : 'Nothing recorded yet.'}
      rowNames={{ one: 'entry', other: 'entries' }}
      stacks
      sayFirstLoad={sayFirstLoad}
      filterState={filterState}
    />
  );
}

export default function SecurityLog() {
  const [filters, setParams] = useFilters(FILTERS);
  const members = useTeamMembers(true);
  const days = useZonedDays(filters, setParams);
  const checks = useMemo(() => checksOf(members), [members]);
  const state = useFilterState(filters, setParams, checks, 'log');
  const apiFilters = { action: filters.action, actor: filters.actor, ...days.api };
  const action = filters.action && actionValue(filters.action);
  const chosen = chosenActions(action);
  const summary = chosen.length > 0 ? actionsSummary(chosen) : null;
  // The whole list under the filters, where the select's summary names only some of them.
  const chosenId = useId();
  // Someone the select does not offer (no longer on the team; an id edited by hand) is shown as
  // selected, not "Anyone", and said in place of the log.
  const actor = filters.actor.toLowerCase();
  const actorOffered = !actor || members.has(actor) || SECURITY_ACTOR_KIND_LABELS.some((kind) => kind.value === actor);
  // The team is never empty (the viewer is on it) once it is read.
  const unknownActor = members.size > 0 ? 'Someone not on the team' : 'Loading…';
  // Days that hold no day match nothing: said under the fields, and the server is not asked; nor
  // is it for a value the log does not have, said in place of the log.
  const unknown = state.unknown.length > 0;
  const asksNothing = days.problem !== null || unknown;
  const afterAskingNothing = useShownAfterAskingNothing(asksNothing);
  // Read here, not in the table, so that this render knows what the log shows (below); no key
  // while it asks nothing.
  const list = usePaged(
    (cursor) => api<List<SecurityEvent>>('GET', `/security-log${query({ ...apiFilters, cursor })}`),
    asksNothing ? null : `security-log${query(apiFilters)}`,
  );
  // The filter row's Clear filters, while filters are set, unless the log offers its own beside
  // its message (a value it does not have; nothing matching): one control of that name in view.
  // Decided from the filters and the rows this render shows, so never out of step with them.
  const logOffersClear = unknown || (!asksNothing && showsNothing(list));
  return (
    <>
      <PageHeader title="Security log" />
      <p className="muted">Every change to tokens, endpoints, secrets, the team and the workspace, newest first.</p>
      <div
        className="filters security-log-filters"
        role="search"
        aria-label="Filter the security log"
        ref={state.rowRef}
      >
        <Filter
          label="Action"
          value={action}
          options={[...(summary ? [{ value: action, label: summary.text }] : []), ...ACTION_OPTIONS]}
          onChange={(value) => setParams({ action: value })}
          problemId={state.fieldProblem('action')}
          describedBy={summary && !summary.whole ? chosenId : undefined}
        />
        <Filter
          label="Who"
          value={actor}
          options={[
            { value: '', label: 'Anyone' },
            ...(actorOffered ? [] : [{ value: actor, label: unknownActor }]),
            ...whoOptions(members),
          ]}
          onChange={(actor) => setParams({ actor })}
          problemId={state.fieldProblem('actor')}
        />
        <ZonedDayRange
          range={days.range}
          problem={days.problem}
          fieldProblems={{ from: state.fieldProblem('from'), to: state.fieldProblem('to') }}
          labels={{ from: 'Since', before: 'Before' }}
          rows="entries"
          after={state.anySet && !logOffersClear && <ClearFilters state={state} inRow />}
        />
        {summary && !summary.whole && (
          <p id={chosenId} className="hint filters-hint">
            Chosen actions: {chosen.join(', ')}.
          </p>
        )}
      </div>
      {unknown && <UnknownFilters state={state} />}
      {!asksNothing && (
        <SecurityLogTable list={list} members={members} filterState={state} sayFirstLoad={afterAskingNothing} />
      )}
    </>
  );
}
