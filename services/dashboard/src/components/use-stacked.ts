import { useLayoutEffect, useState, type RefObject } from 'react';

/**
 * How a table's rows are laid out when the table is wider than its box (a phone, or a window
 * whose side navigation leaves the box too little room): scrolling sideways in the box (false), or
 * stacked (docs/dashboard-ui.md, "Tables at every width"): each cell after its column's name
 * (true), or, for the lists, under a title (`'titled'`): the first column, which names the row and
 * links to its page, on a line of its own, then the status and the amount (the `status` and
 * `numeric` columns) on the next, then the other cells after their names.
 */
export type Stacks = boolean | 'titled';

/**
 * A table as laid out: whole; with its times on two lines (`wrappedClass`); with that and its
 * clipped column narrowed too (`narrowedClass`); or stacked.
 */
export type TableFit = 'table' | 'wrapped' | 'narrowed' | 'stacked';

/**
 * How a table that may stack (`stacks`) is laid out now (docs/dashboard-ui.md, "Tables at every
 * width"): as a table when it fits its box; else, given `wrappedClass`, as a table with that class
 * (its times' time of day under their day: `.list-time`) when that fits; else, given
 * `narrowedClass`, with both classes (its clipped column, `Column.narrows`, giving way down to its
 * floor) when that fits; else stacked. Not the window's width: the room a table has depends on the
 * side navigation beside it and on the card it sits in, and the room it needs on its columns and
 * its data (an endpoint turned off, with the reason under its switch; a long name; a zone written
 * "GMT+1"; six series of a chart). Decided before the page is first painted (a layout effect), and
 * again whenever the box or the table changes size (the window, rows loaded, a chart's table
 * disclosed); the table is laid out in each way for a moment to measure it, without the classes it
 * has now, within one script task, so nothing is drawn meanwhile. The lists and Settings tables
 * (DataTable) and the Overview's chart tables (Chart) all stack by it.
 */
export function useTableFit(
  stacks: Stacks,
  box: RefObject<HTMLElement | null>,
  table: RefObject<HTMLTableElement | null>,
  {
    stackedClass = 'stacked',
    wrappedClass,
    narrowedClass,
  }: { stackedClass?: string; wrappedClass?: string; narrowedClass?: string } = {},
): TableFit {
  const [fit, setFit] = useState<TableFit>('table');
  useLayoutEffect(() => {
    const boxElement = box.current;
    const tableElement = table.current;
    if (!stacks || !boxElement || !tableElement) return undefined;
    const classes = tableElement.classList;
    const fits = () => boxElement.scrollWidth <= boxElement.clientWidth;
    // Each way in turn, the least change first; each with the classes of the ways before it.
    const ways: Array<[TableFit, string[]]> = [['table', []]];
    if (wrappedClass) ways.push(['wrapped', [wrappedClass]]);
    if (wrappedClass && narrowedClass) ways.push(['narrowed', [wrappedClass, narrowedClass]]);
    const decide = () => {
      const had = [stackedClass, wrappedClass, narrowedClass].filter(
        (name): name is string => !!name && classes.contains(name),
      );
      classes.remove(...had);
      let now: TableFit = 'stacked';
      for (const [way, names] of ways) {
        classes.add(...names);
        const fitting = fits();
        classes.remove(...names);
        if (fitting) {
          now = way;
          break;
        }
      }
      classes.add(...had);
      setFit(now);
    };
    decide();
    const observer = new ResizeObserver(decide);
    observer.observe(boxElement);
    observer.observe(tableElement);
    return () => observer.disconnect();
  }, [stacks, box, table, stackedClass, wrappedClass, narrowedClass]);
  return stacks === false ? 'table' : fit;
}

/** Whether a table that may stack is stacked now: useTableFit without a wrapped way between. */
export function useStacked(
  stacks: Stacks,
  box: RefObject<HTMLElement | null>,
  table: RefObject<HTMLTableElement | null>,
  stackedClass = 'stacked',
): boolean {
  return useTableFit(stacks, box, table, { stackedClass }) === 'stacked';
}
