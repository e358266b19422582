import {
  useEffect,
  useId,
  useLayoutEffect,
  useRef,
  useState,
  type FormEvent,
  type ReactNode,
  type RefObject,
} from 'react';
import { useTableFit, type Stacks } from './use-stacked.js';
import { SEARCH_MAX_CHARACTERS, SEARCH_MIN_CHARACTERS, SEARCH_TOO_SHORT } from '@retention/core/search';
import { usePaged, type ListTotal, type Paged } from '../hooks.js';
import { api, query } from '../api/client.js';
import type { List, ListCount } from '../api/types.js';
import { formatNumber } from '../format.js';
import { useFilters, type AddressChange } from '../router.js';
import { ErrorNote, Loading } from './states.js';
import { DAY_SHAPE, EmptyList, quoted, useReportRefusal, type FilterState } from './FilterStates.js';
import { BusyButton } from './BusyButton.js';
import { focusByScript } from '../focus.js';
import { lengthProblem } from './Field.js';

export interface Column<T> {
  header: string;
  cell: (row: T) => ReactNode;
  numeric?: boolean;
  /** The column that takes the room a list leaves, its text clipped to it (`.clip`); one per list. */
  fill?: boolean;
  /** A column of row buttons: its header is named for screen readers and blank on screen. */
  actions?: boolean;
  /** The row's status (a badge): in a list on a phone, it goes under the row's title (`stacks="titled"`). */
  status?: boolean;
  /**
   * Clipped text (Clipped, whole on hover) that gives way in a list still too wide for its box
   * with its times on two lines (`narrowed`, useTableFit): it takes the room the others leave,
   * down to 7rem, the fill column its narrowest, rather than the list stacking. One per list.
   */
  narrows?: boolean;
  /** The column sorts the list (docs/dashboard-ui.md, "Sorting"), when the table is given `sorting`. */
  sort?: ColumnSort;
  /** A header of two words over a short value, on two lines when the list is short of room. */
  headerWraps?: boolean;
}

/**
 * How a column sorts: its name in the API's `sort` (`amount`; `-amount` descending), and what its
 * values are, for the words of each direction ("largest first", "newest first"). A first click
 * sorts descending (the largest amounts, the newest), as a list asked to be sorted by amount or
 * by time is usually wanted; a click on the sorted column turns it round.
 */
interface ColumnSort {
  key: string;
  kind: 'money' | 'time';
}

/** A sortable list's order: the applied `sort` (the list's default when the address has none). */
export interface ListSorting {
  value: string;
  /** `via`: the control used, when it is the stacked list's Sort by (the focus goes back to it). */
  onChange: (sort: string, via?: 'select') => void;
}

/** The words of a direction of a column's values. */
function directionWords(kind: ColumnSort['kind'], descending: boolean): string {
  if (kind === 'money') return descending ? 'largest first' : 'smallest first';
  return descending ? 'newest first' : 'oldest first';
}

/** The sortable column and direction a `sort` names, if one of `columns` has it. */
function sortedColumn<T>(columns: readonly Column<T>[], sort: string) {
  const descending = sort.startsWith('-');
  const key = descending ? sort.slice(1) : sort;
  const column = columns.find((one) => one.sort?.key === key);
  return column?.sort ? { column, sort: column.sort, descending } : null;
}

/** "Amount, largest first": a sort in words, as the stacked list's Sort by offers it and the live region says it. */
function sortWords<T>(columns: readonly Column<T>[], sort: string): string {
  const sorted = sortedColumn(columns, sort);
  return sorted ? `${sorted.column.header}, ${directionWords(sorted.sort.kind, sorted.descending)}` : sort;
}

/** The orders a list's columns offer: each sortable column's key, descending (`-amount`) and ascending. */
export function sortsOf<T>(columns: readonly Column<T>[]): string[] {
  return columns.flatMap((column) => (column.sort ? [`-${column.sort.key}`, column.sort.key] : []));
}

/**
 * A list's order from its address's `sort` (`value`; none is the list's default, `fallback`),
 * set through `apply`: the default is written as no `sort`, so the address stays as it was
 * before sorting existed, and a bookmark of it is the default list.
 */
export function listSorting(value: string, fallback: string, apply: (next: { sort: string }) => void): ListSorting {
  return { value: value || fallback, onChange: (sort) => apply({ sort: sort === fallback ? '' : sort }) };
}

const cellClass = (column: Column<never>) =>
  [
    column.numeric && 'numeric',
    column.fill && 'fill',
    column.actions && 'row-actions',
    column.status && 'status',
    column.narrows && 'narrows',
    column.headerWraps && 'header-wraps',
  ]
    .filter(Boolean)
    .join(' ') || undefined;

/** A list of any rows, as the helpers here use it: they read its rows, never change them. */
type ReadList = Omit<Paged<unknown>, 'change'>;

/** What a list's rows are called, one and many: "campaign", "campaigns". */
interface RowNames {
  one: string;
  other: string;
}

/**
 * A PagedTable over one of the API's lists (`path`, e.g. `/campaigns`), asked with the page's
 * filters as they go to the API. The path and filters are usePaged's key, so the rows kept for
 * Back are those of the same list and filters. A page renders it only once its filters can be
 * asked (none the list does not have), so nothing is requested before.
 */
export function ApiListTable<T extends { id: string }>({
  path,
  filters,
  ...table
}: { path: string; filters: Record<string, string> } & Omit<PagedTableProps<T>, 'list'>) {
  const list = usePaged(
    (cursor) => api<List<T> & ListCount>('GET', `${path}${query({ ...filters, cursor })}`),
    `${path}${query(filters)}`,
  );
  // Rows are counted whatever their order: the count is asked without the sort, so a new order
  // asks for no new count (docs/dashboard-ui.md, "Sorting").
  const { sort: _sort, ...counted } = filters;
  const total = useListCount(`${path}/count${query(counted)}`, list);
  return <PagedTable list={{ ...list, total }} {...table} />;
}

/**
 * How many rows a list's filters match (docs/dashboard-api.md, "Counts"): its first page's own
 * count when that page is the whole list, else the list's count route (`countUrl`), asked once
 * the first page has come, so the rows never wait for their count. None while it is to come or
 * when it failed: the line is left out, and the list says its own failures.
 */
function useListCount<T>(countUrl: string, list: Paged<T>): ListTotal | null {
  const [counted, setCounted] = useState<{ url: string; total: ListTotal } | null>(null);
  const needed = list.total === null && list.hasMore;
  useEffect(() => {
    if (!needed) return;
    const controller = new AbortController();
    api<{ total: number; total_capped: boolean }>('GET', countUrl, { signal: controller.signal }).then(
      (answer) => setCounted({ url: countUrl, total: { total: answer.total, capped: answer.total_capped } }),
      () => undefined,
    );
    return () => controller.abort();
  }, [countUrl, needed]);
  return list.total ?? (counted?.url === countUrl ? counted.total : null);
}

/**
 * A real <table> over a keyset-paged list, with its loading, empty and error states and Load more.
 * Its outcome after a filter change or Load more is said in a polite live region (useListStatus),
 * and Load more puts the focus on the first row it brought (useFocusNewRows). With its page's
 * `filterState`, a list of none offers Clear filters while a filter is set, and a filter value the
 * server refused is passed to the page to say (FilterStates), not shown as an error to try again.
 */
interface PagedTableProps<T> {
  caption: string;
  columns: Column<T>[];
  list: Paged<T>;
  /** What a list of none says, on screen and in its live region (a sentence; Clear filters is added). */
  empty: ReactNode;
  rowNames: RowNames;
  stacks?: Stacks;
  /** Its first load is a search's result, said as any other (useShownAfterAskingNothing). */
  sayFirstLoad?: boolean;
  /** The page's filters (useFilterState). */
  filterState?: FilterState;
  /** The list's order and how to change it: its `sort` columns' headers are then buttons. */
  sorting?: ListSorting;
}

export function PagedTable<T extends { id: string }>({
  caption,
  columns,
  list,
  empty,
  rowNames,
  stacks = false,
  sayFirstLoad = false,
  filterState,
  sorting,
}: PagedTableProps<T>) {
  const boxRef = useRef<HTMLDivElement>(null);
  const loadMore = useFocusNewRows(list, boxRef);
  const resorted = useSortFocus(list, boxRef);
  const sortChange =
    sorting &&
    ({
      value: sorting.value,
      onChange: (sort: string, via?: 'select') => {
        resorted(sort, via === 'select');
        sorting.onChange(sort);
      },
    } satisfies ListSorting);
  const said = useListStatus(list, rowNames, sayFirstLoad, sorting && sortWords(columns, sorting.value));
  const moneySort = sorting && sortedColumn(columns, sorting.value)?.sort.kind === 'money';
  useReportRefusal(list, filterState);
  const nothing = showsNothing(list);
  const countId = useId();
  const body = () => {
    // The page says a refused filter value in place of the list (UnknownFilters).
    if (filterState?.isAboutFilter(list.refusal)) return null;
    if (list.error && list.items.length === 0) return <ErrorNote message={list.error} onRetry={list.reload} />;
    if (list.loading && list.items.length === 0) return <Loading />;
    return (
      <>
        {list.total && (
          <p id={countId} className="list-count">
            {matchCount(list.total, rowNames)}
          </p>
        )}
        {moneySort && (
          <p className="hint sort-hint">
            Amounts are sorted within each currency: an amount is never compared with one in another currency.
          </p>
        )}
        <DataTable
          caption={caption}
          columns={columns}
          rows={list.items}
          stacks={stacks}
          boxRef={boxRef}
          describedBy={list.total ? countId : undefined}
          sorting={sortChange}
        />
        {list.error && <ErrorNote message={list.error} onRetry={list.loadMore} />}
        {list.hasMore && (
          <div className="load-more">
            <BusyButton type="button" className="button" onClick={loadMore} busy={list.loading}>
              {list.loading ? 'Loading…' : 'Load more'}
            </BusyButton>
          </div>
        )}
      </>
    );
  };
  // The list's live region: its "nothing matches" on screen, or its count for screen readers only.
  return (
    <>
      <div role="status">
        {nothing ? <EmptyList state={filterState}>{empty}</EmptyList> : <span className="visually-hidden">{said}</span>}
      </div>
      {!nothing && body()}
    </>
  );
}

/**
 * How many rows a list's filters match, for the line above its table (docs/dashboard-ui.md, "How
 * many match"): "19 campaigns", "1 customer", "More than 1,000 campaigns" (the server counts no
 * further: a count of a million rows would cost what the page does many times over).
 */
function matchCount({ total, capped }: ListTotal, names: RowNames): string {
  if (capped) return `More than ${formatNumber(total)} ${names.other}`;
  return `${formatNumber(total)} ${total === 1 ? names.one : names.other}`;
}

/**
 * Whether a list shows its "nothing" sentence (PagedTable's, the delivery log's): it read no rows
 * for its key, and neither is it loading nor has it failed. A list whose key has just changed is
 * loading (usePaged), so this is never true of the rows of the filters before. The Security log
 * reads it too, to offer its filter row's Clear filters only while the list offers none.
 */
export function showsNothing(list: Pick<ReadList, 'items' | 'loading' | 'error'>): boolean {
  return list.items.length === 0 && !list.loading && !list.error;
}

/**
 * Load more, which then puts the focus on the first row it brought (its first `control`, else its
 * first child: a table row's first cell), so a keyboard user goes on where the new rows start
 * rather than from the button under them, or from the body when there is no next page and the
 * button goes. A failure leaves the focus on the button, beside the error and its Try again.
 * `rows` picks the rows inside `boxRef`: a table's by default, the delivery log's entries there.
 */
export function useFocusNewRows(
  list: ReadList,
  boxRef: RefObject<HTMLElement | null>,
  { rows = 'tbody tr', control = 'a[href]' } = {},
): () => void {
  const firstNewRow = useRef<number | null>(null);
  useEffect(() => {
    const index = firstNewRow.current;
    if (index === null || list.loading) return;
    firstNewRow.current = null;
    const row = boxRef.current?.querySelectorAll(rows)[index];
    if (!row) return;
    const target = row.querySelector<HTMLElement>(control) ?? (row.firstElementChild as HTMLElement | null);
    if (target) focusByScript(target);
  }, [list.loading, list.items.length, boxRef, rows, control]);
  return () => {
    firstNewRow.current = list.items.length;
    list.loadMore();
  };
}

/**
 * After a sort (a column header's button, or the stacked list's Sort by), the focus goes back to
 * the control used once the sorted rows are in: the list reloads from its first page, and while it
 * loads the table, and the button in it, are gone, which left the focus on the page's body.
 * Returns what a sort calls before it changes the order: the control to focus again (`sort` names
 * a header's button by its column's key; the select is found as it is).
 */
function useSortFocus(list: ReadList, boxRef: RefObject<HTMLElement | null>): (sort: string, select: boolean) => void {
  const pending = useRef<{ key: string; select: boolean } | null>(null);
  useEffect(() => {
    const target = pending.current;
    if (target === null || list.loading) return;
    pending.current = null;
    // Sort by is shown only once the new table is found too wide and stacked (useTableFit, in a
    // render after this one): until then it cannot take the focus, so it is tried again a frame
    // later, a few times.
    let frame = 0;
    const focus = (tries: number) => {
      const box = boxRef.current?.parentElement;
      const control = target.select
        ? box?.querySelector<HTMLElement>('.list-sort select')
        : box?.querySelector<HTMLElement>(`th button[data-sort="${target.key}"]`);
      if ((!control || !focusByScript(control)) && tries > 0) {
        frame = requestAnimationFrame(() => focus(tries - 1));
      }
    };
    focus(5);
    return () => cancelAnimationFrame(frame);
  }, [list.loading, boxRef]);
  return (sort, select) => {
    pending.current = { key: sort.replace(/^-/, ''), select };
  };
}

/**
 * How many rows a list shows after a filter change or Load more, for its polite live region: "50
 * campaigns shown, more available", "100 campaigns shown" (a list of none says its `empty`
 * sentence there instead, on screen). Cleared as each load starts, so the same outcome twice is
 * said twice, and the region is on the page empty before it is first filled (a region created
 * holding its text is not reliably read). The page's first load says nothing: the page itself has
 * just been announced; unless `sayFirstLoad`, the table being new after the page asked nothing.
 * A failure is an alert of its own.
 */
function useListStatus(list: ReadList, names: RowNames, sayFirstLoad: boolean, order?: string): string {
  const [said, setSaid] = useState('');
  const firstLoad = useRef(list.loading && !sayFirstLoad);
  const count = list.items.length;
  // A new order is said with the rows it brought: "Sorted by Amount, largest first. 50 campaigns shown".
  const lastOrder = useRef(order);
  useEffect(() => {
    if (list.loading) {
      setSaid('');
      return;
    }
    if (firstLoad.current) {
      firstLoad.current = false;
      return;
    }
    if (list.error || count === 0) return;
    const sorted = order !== lastOrder.current ? `Sorted by ${order}. ` : '';
    lastOrder.current = order;
    setSaid(
      `${sorted}${count} ${count === 1 ? names.one : names.other} shown${list.hasMore ? ', more available' : ''}`,
    );
    // Said once per finished load, and once per list shown from memory (Back to a filter, its
    // rows restored at once, no load between): not again when the page re-renders with a new
    // `names` object.
  }, [list.loading, list.key]);
  return said;
}

/** The class of a list whose times' time of day goes under their day, so that it fits (Time's ListTime). */
const TIMES_WRAPPED = 'times-wrapped';
/** The class of a list that fits only with its `narrows` column giving way too (Column.narrows). */
const NARROWED = 'narrowed';

/**
 * A list table in its scrolling box: the box is a region named by the caption (which is for
 * screen readers) that takes the keyboard's focus, as it scrolls sideways when the table does not
 * fit and does not stack; the table is a `table.list`, one line per cell (docs/dashboard-ui.md,
 * "Lists"), stacked (`stacked`) when it may and is wider than the box (useTableFit), unless putting
 * its times' time of day under their day makes it fit (`times-wrapped`), or that and its `narrows`
 * column giving way (`narrowed`, given `narrows`).
 */
function TableBox({
  caption,
  stacks,
  boxRef,
  narrows,
  describedBy,
  children,
}: {
  caption: string;
  /** The id of a line about the list (its count, PagedTable's), the region's description. */
  describedBy?: string | undefined;
  stacks: Stacks;
  boxRef: RefObject<HTMLDivElement | null> | undefined;
  /** Whether a column may give way (Column.narrows). */
  narrows: boolean;
  /** The table's head and body, given whether the table is stacked now. */
  children: (stacked: boolean) => ReactNode;
}) {
  const ownBox = useRef<HTMLDivElement>(null);
  const box = boxRef ?? ownBox;
  const table = useRef<HTMLTableElement>(null);
  const fit = useTableFit(stacks, box, table, {
    wrappedClass: TIMES_WRAPPED,
    narrowedClass: narrows ? NARROWED : undefined,
  });
  const className = [
    'list',
    stacks && 'stacks',
    fit === 'stacked' && 'stacked',
    (fit === 'wrapped' || fit === 'narrowed') && TIMES_WRAPPED,
    fit === 'narrowed' && NARROWED,
    stacks === 'titled' && 'titled',
  ]
    .filter(Boolean)
    .join(' ');
  return (
    <div
      className="table-wrap"
      tabIndex={0}
      role="region"
      aria-label={caption}
      aria-describedby={describedBy}
      ref={box}
    >
      <table className={className} ref={table}>
        <caption className="visually-hidden">{caption}</caption>
        {children(fit === 'stacked')}
      </table>
    </div>
  );
}

/**
 * A real <table> of rows with column headers (a caption for screen readers). With `stacks`, when
 * the table is wider than its box (a phone; a window narrower than the table needs beside the side
 * navigation) each row is a block of its cells one under another, each after its column's name
 * (the cell's `data-label`, drawn by the stylesheet and not read out: the table is still a table,
 * its headers there for screen readers), so nothing scrolls sideways (docs/dashboard-ui.md,
 * "Tables at every width"); `'titled'` puts the row's title, status and amount first (see Stacks).
 */
/**
 * What a row action has to say (docs/dashboard-ui.md, "A row action's message"): drawn under the
 * row it is about, across the table (or the stacked row's width), where the eyes and the focus
 * are, not above a table whose row may be a screen or two down on a phone.
 */
export interface RowNote {
  /**
   * The row it follows: the row it is about, or, about a row that is gone (someone removed), the
   * row that was before it; null, or a row no longer listed: before the first row.
   */
  after: string | null;
  /** Its live region (LiveStatus) and alert: on the page from when the action starts. */
  content: ReactNode;
  /** False while it has nothing to say (its live region there, empty): it takes no room. */
  saying: boolean;
}

export function DataTable<T extends { id: string }>({
  caption,
  columns,
  rows,
  rowClass,
  stacks = false,
  boxRef,
  note = null,
  describedBy,
  sorting,
}: {
  caption: string;
  columns: Column<T>[];
  rows: T[];
  /** The id of a line about the list (its count), the table's description. */
  describedBy?: string | undefined;
  rowClass?: (row: T) => string | undefined;
  stacks?: Stacks;
  /** The table's scrolling box, for a list that moves the focus to one of its rows. */
  boxRef?: RefObject<HTMLDivElement | null>;
  /** A row action's message, under its row. */
  note?: RowNote | null;
  /** The list's order: the headers of its `sort` columns are then buttons that sort it. */
  sorting?: ListSorting | undefined;
}) {
  const noteRef = useRef<HTMLTableRowElement>(null);
  const saying = note?.saying ?? false;
  // In sight once it says something: beside a row at the window's bottom edge (where a tap or
  // the focus left it), a note drawn under the row was out of sight. The least scroll that shows
  // it, before it is painted; none when it is in sight already.
  useLayoutEffect(() => {
    if (saying) noteRef.current?.scrollIntoView({ block: 'nearest' });
  }, [saying]);
  const noteRow = note && (
    <tr key="row-note" ref={noteRef} className={note.saying ? 'row-note' : 'row-note quiet'}>
      <td colSpan={columns.length}>{note.content}</td>
    </tr>
  );
  const noteAfter = note && rows.some((row) => row.id === note.after) ? note.after : null;
  const sortable = sorting ? columns.filter((column) => column.sort) : [];
  return (
    <>
      {sorting && sortable.length > 0 && <SortSelect columns={sortable} sorting={sorting} />}
      <TableBox
        caption={caption}
        stacks={stacks}
        boxRef={boxRef}
        describedBy={describedBy}
        narrows={columns.some((column) => column.narrows)}
      >
        {(stacked) => (
          <>
            <thead>
              <tr>
                {columns.map((column) => (
                  <HeaderCell key={column.header} column={column} sorting={sorting} stacked={stacked} />
                ))}
              </tr>
            </thead>
            {/* One array, the note keyed among the rows: moved to another row, it stays the same
          element, and its live region with it. */}
            <tbody>
              {[
                ...(noteRow && noteAfter === null ? [noteRow] : []),
                ...rows.flatMap((row) => [
                  <tr key={row.id} className={rowClass?.(row)}>
                    {columns.map((column) => (
                      <td
                        key={column.header}
                        className={cellClass(column)}
                        data-label={stacks && !column.actions ? column.header : undefined}
                      >
                        {column.cell(row)}
                      </td>
                    ))}
                  </tr>,
                  ...(noteRow && row.id === noteAfter ? [noteRow] : []),
                ]),
              ]}
            </tbody>
          </>
        )}
      </TableBox>
    </>
  );
}

/**
 * A column's header: a sortable column's (with `sorting`) is a button named by the header alone
 * ("Amount") inside the `<th>`, whose `aria-sort` says the order (WAI-ARIA's sortable table:
 * only the sorted column has it, ascending or descending; the others none); the arrow beside
 * the name is drawn, not read. Stacked (a phone), the header row is out of sight, so its buttons
 * leave the Tab order (`tabIndex` -1: a screen reader still has them in the table) and Sort by
 * (SortSelect) does their work.
 */
function HeaderCell<T>({
  column,
  sorting,
  stacked,
}: {
  column: Column<T>;
  sorting: ListSorting | undefined;
  stacked: boolean;
}) {
  const className = column.actions ? undefined : cellClass(column);
  if (!sorting || !column.sort) {
    return (
      <th scope="col" className={className}>
        {column.actions ? <span className="visually-hidden">{column.header}</span> : column.header}
      </th>
    );
  }
  const { key } = column.sort;
  const sorted = sortedColumn([column], sorting.value);
  const next = sorted && sorted.descending ? key : `-${key}`;
  return (
    <th
      scope="col"
      className={[className, 'sortable'].filter(Boolean).join(' ')}
      aria-sort={sorted ? (sorted.descending ? 'descending' : 'ascending') : undefined}
    >
      <button
        type="button"
        className="sort-button"
        data-sort={key}
        tabIndex={stacked ? -1 : undefined}
        onClick={() => sorting.onChange(next)}
      >
        {column.header}
        <span className={sorted ? 'sort-arrow sorted' : 'sort-arrow'} aria-hidden="true">
          {sorted ? (sorted.descending ? '↓' : '↑') : '↕'}
        </span>
      </button>
    </th>
  );
}

/**
 * Sort by: the list's orders in a select, for a stacked table (a phone), whose header row, and
 * the buttons in it, are out of sight. Hidden while the table is not stacked (styles.css,
 * `.list-sort`): there the headers sort it.
 */
function SortSelect<T>({ columns, sorting }: { columns: Column<T>[]; sorting: ListSorting }) {
  const options = sortsOf(columns).map((value) => ({ value, label: sortWords(columns, value) }));
  return (
    <div className="list-sort">
      <Filter
        label="Sort by"
        value={sorting.value}
        options={options}
        onChange={(sort) => sorting.onChange(sort, 'select')}
      />
    </div>
  );
}

/** Longest unknown value shown whole as a Filter's option. */
const UNKNOWN_OPTION_CHARACTERS = 24;

/** A labelled option: its value (an API code, or a list of them, as the address keeps it) and its words. */
export interface FilterOption {
  value: string;
  label: string;
}

/** Options under a heading of their own (an <optgroup>): "API tokens", then its actions. */
export interface FilterGroup {
  group: string;
  options: readonly FilterOption[];
}

/**
 * A labelled <select> filter. Its options' values are the API's codes (the address keeps them);
 * what is shown is each one's label: `optionLabel`'s words for plain string options, with "All"
 * (the empty value) first, or labelled options as given, with no "All"; a group's are under its
 * heading. There is no default label: a code humanized ("in flight") is not a label
 * (docs/dashboard-ui.md, "Labels"). A value none of its options has (an address edited by hand)
 * is shown as it is, selected: a <select> would read its first option, "All", over a list
 * filtered otherwise, or over the note that says the value is unknown (`problemId`, FilterStates).
 */
export function Filter({
  label,
  value,
  onChange,
  problemId,
  describedBy,
  ...choices
}: {
  label: string;
  value: string;
  onChange: (value: string) => void;
  /** The id of what says this value is unknown, when it is: the select is then `aria-invalid`. */
  problemId?: string | undefined;
  /** The id of more words about the choice (the Security log's chosen actions, named whole). */
  describedBy?: string | undefined;
} & (
  | { options: readonly string[]; optionLabel: (value: string) => string }
  | { options: readonly (FilterOption | FilterGroup)[]; optionLabel?: never }
)) {
  const options =
    choices.optionLabel === undefined
      ? choices.options
      : [
          { value: '', label: 'All' },
          ...choices.options.map((option) => ({ value: option, label: choices.optionLabel(option) })),
        ];
  const choice = (option: FilterOption) => (
    <option key={option.value} value={option.value}>
      {option.label}
    </option>
  );
  const offered = options.some((option) =>
    'group' in option ? option.options.some((one) => one.value === value) : option.value === value,
  );
  // Cut short: the select is as wide as its longest option, and the note under it says it whole.
  const shown = offered
    ? options
    : [{ value, label: `${quoted(value, UNKNOWN_OPTION_CHARACTERS)} (unknown)` }, ...options];
  const described = [problemId, describedBy].filter(Boolean).join(' ');
  return (
    <label className="filter">
      <span>{label}</span>
      <select
        value={value}
        aria-invalid={problemId ? true : undefined}
        aria-describedby={described || undefined}
        onChange={(event) => onChange(event.target.value)}
      >
        {shown.map((option) =>
          'group' in option ? (
            <optgroup key={option.group} label={option.group}>
              {option.options.map(choice)}
            </optgroup>
          ) : (
            choice(option)
          ),
        )}
      </select>
    </label>
  );
}

/** Text cut to its column with an ellipsis, whole in the title (a dash when there is none). */
export function Clipped({
  text,
  className,
  code = false,
  title = text,
  children,
}: {
  text: string | null | undefined;
  className?: string;
  code?: boolean;
  /** What hovering shows: the whole text unless told (a label's code, say). */
  title?: string | null;
  /**
   * What is drawn, when it is the text with its break opportunities (BreakableEmail): on one
   * clipped line they change nothing, and in a stacked row, where the text wraps, it wraps there
   * rather than anywhere.
   */
  children?: ReactNode;
}) {
  if (!text) return <>—</>;
  const classes = ['clip', className].filter(Boolean).join(' ');
  return code ? (
    <code className={classes} title={title ?? undefined}>
      {children ?? text}
    </code>
  ) : (
    <span className={classes} title={title ?? undefined}>
      {children ?? text}
    </span>
  );
}

/**
 * A status as a badge: its label in words (labels.ts), coloured by its code (styles.css, `.badge-…`).
 * The label is required: a badge showed its code humanized ("in flight", "past due").
 */
export function Badge({ value, label }: { value: string; label: string }) {
  return <span className={`badge badge-${value}`}>{label}</span>;
}

/**
 * A list's filters in the address (useFilters) with its search boxes' text as typed, which the
 * page keeps (not each box) so that every change applies all of it: a search box applies on
 * Enter or its button, and a change of any other filter applies the boxes' current text too. A
 * box emptied and not submitted kept its old search in the address and the list before, while
 * it showed nothing. An empty box drops its filter.
 */
export function useListFilters<Name extends string>(names: readonly Name[], searches: readonly Name[]) {
  const [filters, setParams] = useFilters(names);
  /** Each box's text where it was edited since the address last changed. */
  const [typed, setTyped] = useState<Partial<Record<Name, string>>>({});
  // The address changed (a search applied, Back): each box shows the address's value again.
  const applied = searches.map((name) => filters[name]).join('\n');
  useEffect(() => setTyped({}), [applied]);
  const textOf = (name: Name) => typed[name] ?? filters[name];
  const apply = (next: Partial<Record<Name, string>>, change?: AddressChange) => {
    const boxes = Object.fromEntries(searches.map((name) => [name, textOf(name).trim()])) as Partial<
      Record<Name, string>
    >;
    setTyped({});
    setParams({ ...boxes, ...next }, change);
  };
  /** The props of the SearchFilter of `name`. */
  const search = (name: Name) => ({
    text: textOf(name),
    onText: (text: string) => setTyped((previous) => ({ ...previous, [name]: text })),
    onSearch: () => apply({}),
  });
  return { filters, apply, search };
}

/**
 * A search box that applies on Enter or its button (not per keystroke: each search is a query
 * on the server), with the page's other filters (useListFilters keeps its text). An empty
 * search clears the filter. A search its `check` refuses (under 3 characters) is not applied:
 * said at the box, the list stays the one the address asks for, where applying it emptied the
 * page of its table, its count and its export for a slip of the keyboard.
 */
export function SearchFilter({
  label,
  text,
  onText,
  onSearch,
  placeholder,
  description,
  buttonLabel = `Search by ${label.toLowerCase()}`,
  problem = null,
  check,
}: {
  label: string;
  text: string;
  onText: (text: string) => void;
  onSearch: () => void;
  /** What it matches, when the label alone would let one expect a partial match. */
  placeholder?: string;
  /**
   * What it finds and its rules (at least 3 characters), shown under the box and its button and
   * tied to the box as its description: a placeholder is gone once one types, is cut off in a
   * box narrower than it, and not every screen reader reads it; the rules were in a description
   * for screen readers only, and sighted users saw the placeholder alone.
   */
  description?: string;
  /** The Search button's accessible name, where the label is already a "Search by …". */
  buttonLabel?: string;
  /** Why the applied search asks nothing (searchProblem), said at the box. */
  problem?: string | null;
  /** Why a typed search cannot be applied (searchProblem), or null when it can. */
  check?: (text: string) => string | null;
}) {
  const descriptionId = useId();
  const problemId = useId();
  /** Why the search typed last was not applied; gone at the next edit. */
  const [refusal, setRefusal] = useState<string | null>(null);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    const refused = check?.(text) ?? null;
    setRefusal(refused);
    if (refused === null) onSearch();
  };
  const said = refusal ?? problem;
  const describedBy = [description ? descriptionId : '', said ? problemId : ''].filter(Boolean).join(' ');
  return (
    <form className="filter search" onSubmit={submit}>
      <label>
        <span>{label}</span>
        <input
          type="search"
          value={text}
          placeholder={placeholder}
          aria-invalid={said ? true : undefined}
          aria-describedby={describedBy || undefined}
          onChange={(event) => {
            setRefusal(null);
            onText(event.target.value);
          }}
        />
      </label>
      <button type="submit" className="button small" aria-label={buttonLabel}>
        Search
      </button>
      {description && (
        <span id={descriptionId} className="hint search-hint">
          {description}
        </span>
      )}
      {said && (
        <p id={problemId} className="field-error filters-problem" role="alert">
          {said}
        </p>
      )}
    </form>
  );
}

/**
 * Whether the page has asked nothing (`asksNothing`: a search under 3 characters, days that hold
 * none) since it opened. Its table is then gone, and the next one it shows is a search's result,
 * whose count its live region must say (PagedTable's `sayFirstLoad`): it said nothing, as if the
 * page had just opened, so a screen reader heard the too-short hint and then silence.
 */
export function useShownAfterAskingNothing(asksNothing: boolean): boolean {
  const [askedNothing, setAskedNothing] = useState(asksNothing);
  if (asksNothing && !askedNothing) setAskedNothing(true);
  return askedNothing;
}

/**
 * Why a search (`q`) as applied would be refused, or null: under 3 characters the server
 * answers 400 (no trigram to look up), so the page says so at the box and asks nothing; the
 * sentence is the server's own. Over 320 (counted as the server does, trimmed) it is said the
 * way a field over its limit is (Field's `limit`): the box had `maxLength`, which cut a pasted
 * text at 320 without a word and searched for the rest.
 */
export function searchProblem(q: string): string | null {
  const length = q.trim().length;
  // Spaces alone too: the server trims them to nothing and refuses that as too short.
  if (q.length > 0 && length < SEARCH_MIN_CHARACTERS) return SEARCH_TOO_SHORT;
  return lengthProblem(length, SEARCH_MAX_CHARACTERS);
}

/** A labelled date field: a day (`YYYY-MM-DD`) of the zone DayRangeFilter names (see startOfDayIn). */
function DateFilter({
  label,
  value,
  onChange,
  problemId,
  zoneId,
}: {
  label: string;
  value: string;
  onChange: (value: string) => void;
  /** The id of what is wrong with this field's value, when something is. */
  problemId?: string | undefined;
  /** The id of the line naming the zone of its days. */
  zoneId: string;
}) {
  return (
    <label className="filter">
      <span>{label}</span>
      <input
        type="date"
        value={value}
        aria-invalid={problemId ? true : undefined}
        aria-describedby={[zoneId, problemId].filter(Boolean).join(' ')}
        onChange={(event) => onChange(event.target.value)}
      />
    </label>
  );
}

/**
 * Why the days from `from` up to `before` (its own day excluded, as the API's `to`) are none,
 * or null when there are some (or either end is open). Such a list is empty whatever the data,
 * so the page says this instead of asking the server.
 */
export function emptyDayRange(from: string, before: string): string | null {
  if (!DAY_SHAPE.test(from) || !DAY_SHAPE.test(before) || from < before) return null;
  return from === before
    ? 'The end day is not included, so nothing can match: for one day, end on the day after it.'
    : 'The start day is after the end day, so nothing can match.';
}

interface DayField {
  label: string;
  value: string;
  onChange: (value: string) => void;
  /** The id of what says this field's value is unknown, when it is (FilterStates). */
  problemId?: string | undefined;
}

/**
 * A from–before pair of DateFilters, then a line naming the zone their days are in ("Days in
 * Pacific/Auckland time.", tied to both fields), with `notes` about that zone after it (a link's
 * zone, the Overview's UTC days); `problem` (emptyDayRange's) is shown under them, tied to both.
 * `after` goes on the fields' line, after them (the Security log's Clear filters).
 */
export function DayRangeFilter({
  from,
  before,
  problem,
  zone,
  notes,
  after,
}: {
  from: DayField;
  before: DayField;
  problem: string | null;
  /** The IANA name of the zone the days are in. */
  zone: string;
  notes?: ReactNode;
  after?: ReactNode;
}) {
  const id = useId();
  const zoneId = `${id}-zone`;
  const problemId = problem ? id : undefined;
  return (
    <>
      <DateFilter {...from} problemId={problemId ?? from.problemId} zoneId={zoneId} />
      <DateFilter {...before} problemId={problemId ?? before.problemId} zoneId={zoneId} />
      {after}
      {problem && (
        <p id={id} className="field-error filters-problem" role="alert">
          {problem}
        </p>
      )}
      <div className="filters-zone">
        <p id={zoneId} className="hint">
          Days in {zone} time.
        </p>
        {notes}
      </div>
    </>
  );
}

/**
 * Export CSV: a plain link to the streamed export of the same filters (the browser downloads
 * it with the session cookie; nothing is held in the page). Without an `href` (filters that
 * can match nothing) it is a disabled button in its place.
 */
export function ExportLink({ href }: { href: string | null }) {
  if (!href) {
    return (
      <button type="button" className="button" disabled>
        Export CSV
      </button>
    );
  }
  return (
    <a className="button" href={href} download>
      Export CSV
    </a>
  );
}

/**
 * A list's "nothing matches" when a box that matches whole values only (a tag, docs/dashboard-api.md,
 * "Text filters") was used: "vi" matching no customer read as there being no VIPs, when only
 * whole tags are looked for.
 */
export function noMatchSaying(nothing: string, searched: string[], whole: string): string {
  const terms = searched.filter(Boolean);
  if (terms.length === 0) return nothing;
  const quoted = terms.map((term) => `"${term}"`).join(' and ');
  return `${nothing} Search matches ${whole} exactly; ${quoted} is not looked for within them.`;
}
