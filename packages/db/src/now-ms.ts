/**
 * now(), rounded as a timestamptz(3) column rounds what it stores. Postgres rounds to the
 * nearest millisecond, so a row made due at its insert's now() is stored up to half a
 * millisecond in the future about half the time: compared with the exact now() of a
 * transaction begun within that half millisecond, it is not due yet. Rounding now() the same
 * way keeps the order: what was due when stored is due. For "due" comparisons against the
 * timestamptz(3) columns (processor_events and webhook_deliveries' next_attempt_at).
 */
export const NOW_MS_SQL = 'now()::timestamptz(3)';
