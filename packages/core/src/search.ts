/**
 * The dashboard's search by part of a value (`q`; docs/dashboard-api.md, "Text filters"): the
 * server's limits and refusal, shared with the page, which says the same sentence at the box
 * rather than ask (its own import: no server code in the browser's bundle).
 */

/** The fewest characters a search takes: pg_trgm's trigram, the index's unit. */
export const SEARCH_MIN_CHARACTERS = 3;
export const SEARCH_MAX_CHARACTERS = 320;
/** The refusal of a search too short to use the index. */
export const SEARCH_TOO_SHORT = `Type at least ${SEARCH_MIN_CHARACTERS} characters to search.`;
