import { formatLocalTime, formatUtcTime } from '../format.js';

/** A time in the viewer's zone; the UTC time on hover. */
export function Time({ value, empty = '—' }: { value: string | null | undefined; empty?: string }) {
  if (!value) return <>{empty}</>;
  return (
    <time dateTime={value} title={formatUtcTime(value)}>
      {formatLocalTime(value)}
    </time>
  );
}
