/**
 * Moving the keyboard's focus by script (docs/dashboard-ui.md, "Accessibility"): to a page's
 * heading, `main`, a table cell or a dialog, none of which Tab visits. Each is made focusable by
 * script only (`tabindex="-1"`: out of the Tab order, no ring) before it is focused; a link or a
 * button is focused as it is, in the Tab order it already has.
 */
export function focusByScript(element: HTMLElement, options?: FocusOptions): boolean {
  // tabIndex reads 0 for what the browser focuses on its own (links, buttons, fields), -1 else.
  if (element.tabIndex < 0 && !element.hasAttribute('tabindex')) element.tabIndex = -1;
  element.focus(options);
  return document.activeElement === element;
}

/**
 * Focuses the page's h1, if it is there, without scrolling (the page is where it belongs: at the
 * top after a link, or where Back put it); whether it did.
 */
export function focusHeading(): boolean {
  const heading = document.querySelector<HTMLElement>('main h1');
  return heading ? focusByScript(heading, { preventScroll: true }) : false;
}

/**
 * Focuses the page's `main` (its content, not a control in it), without scrolling: where the
 * focus goes when the control that had it goes away with what it acted on (a banner's Turn on).
 */
export function focusMainContent(): boolean {
  const main = document.querySelector<HTMLElement>('main');
  return main ? focusByScript(main, { preventScroll: true }) : false;
}
