import { useEffect } from 'react';

/**
 * The tab's title follows the page's heading: `Campaigns · Northwind · Retention dashboard`.
 * Every page has exactly one h1 naming it (docs/dashboard-ui.md), some known only once their
 * record has loaded (`Invoice in_…`), so the title is read from the h1 whenever the page
 * changes rather than set by each page: one place, and never out of step with the heading that
 * screen readers announce. Tabs, history and bookmarks then tell pages apart.
 */
export function useTitleFromHeading(suffix: string): void {
  useEffect(() => {
    const update = () => {
      const heading = document.querySelector('h1')?.textContent?.trim();
      const title = heading ? `${heading} · ${suffix}` : suffix;
      if (document.title !== title) document.title = title;
    };
    update();
    const observer = new MutationObserver(update);
    observer.observe(document.body, { subtree: true, childList: true, characterData: true });
    return () => observer.disconnect();
  }, [suffix]);
}
