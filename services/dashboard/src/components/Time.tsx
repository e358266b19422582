import { formatListTime, formatLocalTime, formatUtcTime } from '../format.js';

/**
 * Every time the insight pages show (docs/dashboard-ui.md, "Times"): in the viewer's zone,
 * named (`Nov 26, 2026, 2:08 PM EST`); the UTC time on hover. `short` (list cells): the day, and the
 * time of day with `withTime` (naming the zone), in one line; the hover then gives the full local time too.
 */
export function Time({
  value,
  empty = '—',
  short = false,
  withTime = false,
}: {
  value: string | null | undefined;
  empty?: string;
  short?: boolean;
  withTime?: boolean;
}) {
  if (!value) return <>{empty}</>;
  return (
    <time dateTime={value} title={short ? `${formatLocalTime(value)} (${formatUtcTime(value)})` : formatUtcTime(value)}>
      {short ? formatListTime(value, withTime) : formatLocalTime(value)}
    </time>
  );
}
