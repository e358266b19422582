import { useId, useLayoutEffect, useRef, useState, type ReactNode, type RefObject } from 'react';
import type { ParamRefusal, Paged } from '../hooks.js';
import { useSearchParams } from '../router.js';
import { Empty } from './states.js';

/**
 * What a list's filters say when they are the reason it shows no rows (docs/dashboard-ui.md, "A
 * filter value a list does not have" and "Clear filters"), for every list alike: Campaigns,
 * Customers, Cancel sessions, an endpoint's delivery log and the Security log.
 */

/** How a list knows the values of one filter of its address. */
export interface FilterCheck {
  /** What a sentence calls the filter: "status", "the start day". */
  says: string;
  /**
   * Whether the list has this value. None for free text (a search), which only the server can
   * refuse: its refusal is said then, in the server's words.
   */
  knows?: (value: string) => boolean;
  /** The value is codes separated by commas (the Security log's actions), each checked. */
  commaList?: boolean;
  /** How the sentence goes on about a value it does not know; "which this list does not have" unless told. */
  because?: string;
  /**
   * The whole sentence about a value the list cannot take, when why depends on the value or on
   * the other filters (an amount: not digits, too large, more than the maximum); null when it
   * takes it. Checked after `knows`.
   */
  sentence?: (value: string) => string | null;
  /** The API's name for the filter where the address's differs (the delivery log's `log_outcome`). */
  apiName?: string;
}

/** A filter the address sets to a value the list does not have, and the sentence that says so. */
interface UnknownValue {
  name: string;
  sentence: string;
}

/** A value the server refused (a 400 `invalid_param` at its filter), kept while the address asks for it. */
interface Refused {
  name: string;
  value: string;
  message: string;
}

/**
 * A mistake in the address's parameters themselves (useFilterState's `strictAddress`): one the
 * list does not take (`?reason=` for `reason_code`), or one given more than once.
 */
interface AddressMistake {
  /** The parameter, as the address spells it. */
  name: string;
  /** The filter it is, when it is one (a repeated filter): its field is marked. */
  filter?: string;
  sentence: string;
}

export interface FilterState {
  /** Whether the address sets any filter: a list of none then offers Clear filters. */
  anySet: boolean;
  /**
   * The address's parameters the list does not take or that it gives more than once, said with
   * the unknown values (UnknownFilters), the list shown all the same, filtered by what it takes
   * (the first of a repeated one): the sentences say so.
   */
  mistakes: readonly AddressMistake[];
  /**
   * The values the address asks for that the list does not have: found on the page before asking,
   * or refused by the server. The page shows UnknownFilters instead of its list while there are any.
   */
  unknown: readonly UnknownValue[];
  /** The id of UnknownFilters' sentences: the description of each field they are about. */
  noteId: string;
  /** The filter row (its `role="search"` box): Clear filters puts the focus on its first field. */
  rowRef: RefObject<HTMLDivElement | null>;
  /** Drops every filter from the address (the list is asked for again) and focuses the first field. */
  clear: () => void;
  /** A Filter's or a day field's marks while its value is unknown: `aria-invalid`, described by the note. */
  fieldProblem: (name: string) => string | undefined;
  /** Whether a refusal is about a filter the address sets (said by UnknownFilters, not as an error). */
  isAboutFilter: (refusal: ParamRefusal | null) => boolean;
  /** A list's report of such a refusal (useReportRefusal). */
  refused: (refusal: ParamRefusal) => void;
}

/** Longest value quoted whole in a sentence: an address can hold anything, and a phone is narrow. */
const QUOTED_CHARACTERS = 60;

/** A value quoted for a sentence or an option, cut (by characters, never inside one) when it is long. */
export function quoted(value: string, most = QUOTED_CHARACTERS): string {
  const characters = [...value];
  const shown = characters.length > most ? `${characters.slice(0, most - 1).join('')}…` : value;
  return `“${shown}”`;
}

/** “a”, “a” and “b”, “a”, “b” and “c”. */
function quotedList(values: readonly string[]): string {
  const all = values.map((value) => quoted(value));
  return all.length === 1 ? all[0]! : `${all.slice(0, -1).join(', ')} and ${all.at(-1)!}`;
}

/** The parts of a value the check does not know (the whole value, or codes of a comma list). */
function unknownParts(check: FilterCheck, value: string): string[] {
  if (!check.knows) return [];
  const parts = check.commaList ? value.split(',') : [value];
  return parts.filter((part) => !check.knows!(part));
}

/** "The address asks for status “bogus”, which this list does not have." */
function addressAsks(check: FilterCheck, values: readonly string[], ending: string): string {
  return `The address asks for ${check.says} ${quotedList(values)}, ${ending}.`;
}

/** The reason in a refusal's message (`tag: must not …`): its `param: ` prefix and full stop dropped. */
function refusalReason(message: string, param: string): string {
  const reason = message.startsWith(`${param}: `) ? message.slice(param.length + 2) : message;
  return reason.replace(/\.$/, '');
}

/**
 * A list's filters as its address sets them, checked against what the list has (`checks`, by the
 * address's names; a name without a check, such as the zone `tz`, is cleared with the others but
 * filters nothing by itself). `setParams` replaces filters in the address; `noun` is what the
 * sentences call the list ("list", "log").
 */
export function useFilterState<Name extends string>(
  filters: Record<Name, string>,
  setParams: (next: Partial<Record<Name, string>>) => void,
  checks: Partial<Record<Name, FilterCheck>>,
  noun = 'list',
  {
    strictAddress = false,
    order = [],
  }: {
    strictAddress?: boolean;
    /**
     * Parameters that order the list rather than filter it (`sort`): checked as filters are, but
     * no reason to offer Clear filters, which keeps them (unless their value is unknown).
     */
    order?: readonly Name[];
  } = {},
): FilterState {
  const [params, setAddress] = useSearchParams();
  const mistakes = strictAddress ? addressMistakes(params, Object.keys(filters), checks, noun) : [];
  const rowRef = useRef<HTMLDivElement>(null);
  const noteId = useId();
  const [refusals, setRefusals] = useState<readonly Refused[]>([]);
  const checked = Object.entries(checks) as [Name, FilterCheck][];
  const doesNotHave = `which this ${noun} does not have`;

  const unknownOf = (name: Name, check: FilterCheck): UnknownValue | null => {
    const value = filters[name];
    if (!value) return null;
    const parts = unknownParts(check, value);
    if (parts.length > 0) return { name, sentence: addressAsks(check, parts, check.because ?? doesNotHave) };
    const own = check.sentence?.(value);
    if (own) return { name, sentence: own };
    const refused = refusals.find((one) => one.name === name && one.value === value);
    if (!refused) return null;
    // A value the page took for one the server has (a later server's codes differ) reads as any
    // unknown value. Free text, which the page cannot check, and a value whose own sentence
    // passed (a rule the page does not know) are said with the server's reason: the page's
    // `because` would name the wrong one.
    const ending =
      check.knows && !check.sentence
        ? (check.because ?? doesNotHave)
        : `which this ${noun} does not take (${refusalReason(refused.message, check.apiName ?? name)})`;
    return { name, sentence: addressAsks(check, [value], ending) };
  };
  const unknown = checked.flatMap(([name, check]) => unknownOf(name, check) ?? []);

  /** The address's filter the API calls `param`, when the address sets it. */
  const filterRefused = (refusal: ParamRefusal | null): Name | undefined =>
    refusal
      ? checked.find(([name, check]) => (check.apiName ?? name) === refusal.param && filters[name] !== '')?.[0]
      : undefined;

  const clear = () => {
    const cleared = (Object.keys(filters) as Name[]).filter(
      (name) => !order.includes(name) || unknown.some((one) => one.name === name),
    );
    const none = Object.fromEntries(cleared.map((name) => [name, ''])) as Partial<Record<Name, string>>;
    // The parameters the list does not take go too, in the same change of the address.
    if (mistakes.length > 0) setAddress({ ...none, ...Object.fromEntries(mistakes.map(({ name }) => [name, ''])) });
    else setParams(none);
    rowRef.current?.querySelector<HTMLElement>('input, select')?.focus();
  };

  return {
    anySet: checked.some(([name]) => !order.includes(name) && filters[name] !== ''),
    mistakes,
    unknown,
    noteId,
    rowRef,
    clear,
    fieldProblem: (name) =>
      unknown.some((one) => one.name === name) || mistakes.some((one) => one.filter === name) ? noteId : undefined,
    isAboutFilter: (refusal) => filterRefused(refusal) !== undefined,
    refused: (refusal) => {
      const name = filterRefused(refusal);
      if (name === undefined) return;
      const value = filters[name];
      setRefusals((kept) => [...kept.filter((one) => one.name !== name), { name, value, message: refusal.message }]);
    },
  };
}

/**
 * What is wrong with the address's parameters themselves (docs/dashboard-ui.md, "A parameter a
 * list does not take"): each one not among `names` (the list's filters and its zone), and each of
 * those given more than once, in the address's order. A name, like a value, is quoted and cut.
 */
function addressMistakes(
  params: URLSearchParams,
  names: readonly string[],
  checks: Partial<Record<string, FilterCheck>>,
  noun: string,
): AddressMistake[] {
  const seen = new Set<string>();
  const mistakes: AddressMistake[] = [];
  for (const name of params.keys()) {
    if (seen.has(name)) continue;
    seen.add(name);
    if (!names.includes(name)) {
      mistakes.push({
        name,
        sentence: `The address asks for ${quoted(name)}, which is not one of this ${noun}'s filters, so the ${noun} is not filtered by it.`,
      });
      continue;
    }
    const values = params.getAll(name);
    if (values.length < 2) continue;
    const says = checks[name]?.says ?? name;
    mistakes.push({
      name,
      filter: name,
      sentence: `The address gives ${says} more than once (${quotedList(values)}), so only the first, ${quoted(values[0]!)}, is used.`,
    });
  }
  return mistakes;
}

/**
 * A list's refusal of a filter value, passed on to its page's FilterState, which then says it
 * (UnknownFilters) instead of the list: the server's message could be long (the Security log's
 * listed every action) and Try again could only fail the same way. Before the page is painted, so
 * the raw message is never seen.
 */
export function useReportRefusal(list: Pick<Paged<unknown>, 'refusal'>, state: FilterState | undefined): void {
  const { refusal } = list;
  useLayoutEffect(() => {
    if (refusal && state?.isAboutFilter(refusal)) state.refused(refusal);
    // Once per refusal: `state` is a new object on every render.
  }, [refusal]);
}

/**
 * Clear filters. Beside a list's message (nothing matches, a value it does not have) it is where
 * the reason is read. A filter row's own (`inRow`, the Security log's, a full-size button) is
 * rendered by its page only while the list offers none, decided from the filters and the rows
 * the page renders (SecurityLog.tsx), so that one control of that name is shown at a time.
 */
export function ClearFilters({ state, inRow = false }: { state: FilterState; inRow?: boolean }) {
  return (
    <button type="button" className={inRow ? 'button' : 'button small'} onClick={state.clear}>
      Clear filters
    </button>
  );
}

/**
 * A list of none: its sentence ("No campaigns match these filters."), and Clear filters when the
 * address sets a filter; a list empty without filters has no way out to offer.
 */
export function EmptyList({ state, children }: { state: FilterState | undefined; children: ReactNode }) {
  return (
    <Empty>
      <span>{children}</span>
      {/* The address's mistakes are said above, with their own Clear filters: one in view. */}
      {state?.anySet && state.mistakes.length === 0 && <ClearFilters state={state} />}
    </Empty>
  );
}

/**
 * In place of a list whose address asks for values it does not have: which ones, as text (an
 * address can hold markup), and Clear filters; not Try again, which would ask the same again.
 * Above a list whose address has parameters it does not take or gives twice (`mistakes`), the
 * same, the list under it.
 */
export function UnknownFilters({ state }: { state: FilterState }) {
  return (
    <div className="state empty unknown-filters" role="alert">
      <div id={state.noteId}>
        {state.unknown.map(({ name, sentence }) => (
          <p key={`value ${name}`}>{sentence}</p>
        ))}
        {state.mistakes.map(({ name, sentence }) => (
          <p key={`param ${name}`}>{sentence}</p>
        ))}
      </div>
      <ClearFilters state={state} />
    </div>
  );
}

/** The codes a filter takes, for its check: the API's (from core or labels.ts), nothing else. */
export function oneOf(codes: readonly string[]): (value: string) => boolean {
  return (value) => codes.includes(value);
}

/** The shape of a day field's value, as `<input type="date">` gives it: `YYYY-MM-DD`. */
export const DAY_SHAPE = /^\d{4}-\d{2}-\d{2}$/;

/** A day of a day field (DAY_SHAPE, and a day the calendar has: 2026-02-30 is none). */
function isDay(value: string): boolean {
  if (!DAY_SHAPE.test(value)) return false;
  const at = new Date(`${value}T00:00:00Z`);
  return !Number.isNaN(at.getTime()) && at.toISOString().startsWith(value);
}

/**
 * The check of a day field (`from`, `to`). The API also takes a timestamp, but the field shows
 * days only: a timestamp would filter the list under an empty field.
 */
export function dayCheck(says: string): FilterCheck {
  return { says, knows: isDay, because: 'which is not a date like 2026-11-24' };
}
