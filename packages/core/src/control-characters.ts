/**
 * The control characters free text may not hold, as one definition for every door (query
 * strings, JSON schemas, the operator CLI, Stripe's ids): C0 and DEL. Postgres's text refuses
 * NUL outright, and no person types the others. Text a customer writes on several lines (a
 * cancel session's feedback) keeps tab, line feed and carriage return.
 */
const C0_AND_DEL = '\\u0000-\\u001f\\u007f';
const C0_AND_DEL_BUT_TAB_AND_LINE_BREAKS = '\\u0000-\\u0008\\u000b\\u000c\\u000e-\\u001f\\u007f';

export const CONTROL_CHARACTER = new RegExp(`[${C0_AND_DEL}]`);
export const CONTROL_CHARACTER_BUT_TAB_AND_LINE_BREAKS = new RegExp(`[${C0_AND_DEL_BUT_TAB_AND_LINE_BREAKS}]`);

/** JSON Schema `pattern`s for the same: a whole string without them. */
export const WITHOUT_CONTROL_CHARACTERS = `^[^${C0_AND_DEL}]*$`;
export const WITHOUT_CONTROL_CHARACTERS_BUT_TAB_AND_LINE_BREAKS = `^[^${C0_AND_DEL_BUT_TAB_AND_LINE_BREAKS}]*$`;
