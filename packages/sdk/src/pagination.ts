import { UnexpectedResponseError } from './errors.js';
import type { List } from './resources.js';

export interface CursorParams {
  /** Only rows strictly older than this timestamp: a page's `next_cursor`, an ISO 8601 string or a Date. */
  cursor?: string | Date;
}

/**
 * Every row of a list, newest first, fetched one page at a time as the loop asks for more.
 * Breaking out of the loop stops the fetching.
 */
export async function* paginate<T, P extends CursorParams>(
  fetchPage: (params: P) => Promise<List<T>>,
  params: P,
): AsyncGenerator<T, void, undefined> {
  let page = await fetchPage(params);
  for (;;) {
    yield* page.data;
    if (!page.has_more) return;
    const cursor = page.next_cursor;
    if (cursor === null || !isOlder(cursor, params.cursor)) {
      // Pages run newest first: a cursor that does not move back in time would loop forever.
      throw new UnexpectedResponseError({
        message: `The API said has_more without a next_cursor older than the last (next_cursor ${String(cursor)}).`,
        status: 200,
        requestId: null,
        body: '',
      });
    }
    params = { ...params, cursor };
    page = await fetchPage(params);
  }
}

function isOlder(next: string, previous: string | Date | undefined): boolean {
  if (previous === undefined) return true;
  const nextTime = Date.parse(next);
  const previousTime = previous instanceof Date ? previous.getTime() : Date.parse(previous);
  if (Number.isNaN(nextTime) || Number.isNaN(previousTime)) return next !== previous;
  return nextTime < previousTime;
}
