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
    if (cursor === null || cursor === cursorText(params.cursor)) {
      // A cursor that does not move would loop forever; it can only be a fault upstream.
      throw new UnexpectedResponseError({
        message: `The API said has_more without a next_cursor that moves on (next_cursor ${String(cursor)}).`,
        status: 200,
        requestId: null,
        body: '',
      });
    }
    params = { ...params, cursor };
    page = await fetchPage(params);
  }
}

function cursorText(cursor: string | Date | undefined): string | undefined {
  return cursor instanceof Date ? cursor.toISOString() : cursor;
}
