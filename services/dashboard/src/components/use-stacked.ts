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
 * Whether a table that may stack (`stacks`) is stacked now: exactly when, laid out as a table, it
 * is wider than its box (docs/dashboard-ui.md, "Tables at every width"). Not the window's width:
 * the room a table has depends on the side navigation beside it and on the card it sits in, and
 * the room it needs on its columns and its data (an endpoint turned off, with the reason under
 * its switch; a long name; six series of a chart). Decided before the page is first painted (a
 * layout effect), and again whenever the box or the table changes size (the window, rows loaded,
 * a chart's table disclosed); the table is laid out unstacked for a moment to measure it, without
 * `stackedClass` (the class the table has while stacked), within one script task, so nothing is
 * drawn meanwhile. The lists and Settings tables (DataTable) and the Overview's chart tables
 * (Chart) all stack by it.
 */
export function useStacked(
  stacks: Stacks,
  box: RefObject<HTMLElement | null>,
  table: RefObject<HTMLTableElement | null>,
  stackedClass = 'stacked',
): boolean {
  const [stacked, setStacked] = useState(false);
  useLayoutEffect(() => {
    const boxElement = box.current;
    const tableElement = table.current;
    if (!stacks || !boxElement || !tableElement) return undefined;
    const decide = () => {
      const was = tableElement.classList.contains(stackedClass);
      if (was) tableElement.classList.remove(stackedClass);
      const fits = boxElement.scrollWidth <= boxElement.clientWidth;
      if (was) tableElement.classList.add(stackedClass);
      setStacked(!fits);
    };
    decide();
    const observer = new ResizeObserver(decide);
    observer.observe(boxElement);
    observer.observe(tableElement);
    return () => observer.disconnect();
  }, [stacks, box, table, stackedClass]);
  return stacks !== false && stacked;
}
