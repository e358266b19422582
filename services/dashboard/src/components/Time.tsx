import { formatListTimePieces, formatLocalTime, formatUtcTime } from '../format.js';

/**
 * Every time the insight pages show (docs/dashboard-ui.md, "Times"): in the viewer's zone,
 * named (`Nov 26, 2026, 2:08 PM EST`); the UTC time on hover. `short` (list cells): the day, and the
 * time of day with `withTime` (naming the zone), in one line; the hover then gives the full local time too.
 * `sayUtc` (a detail page's facts): the UTC time is also read after the local time, in text for
 * screen readers only, since the hover's `title` is not read by them in browse mode, nor shown
 * to the keyboard; a list leaves it to the hover and to the row's own page, to keep its cells short to listen to.
 * `seconds`: a time seconds away (a wait that ends by itself), where "until 2:08 PM" said nothing of how long.
 */
export function Time({
  value,
  empty = '—',
  short = false,
  withTime = false,
  sayUtc = false,
  seconds = false,
}: {
  value: string | null | undefined;
  empty?: string;
  short?: boolean;
  withTime?: boolean;
  sayUtc?: boolean;
  seconds?: boolean;
}) {
  if (!value) return <>{empty}</>;
  return (
    <time dateTime={value} title={short ? `${formatLocalTime(value)} (${formatUtcTime(value)})` : formatUtcTime(value)}>
      {short ? <ListTime pieces={formatListTimePieces(value, withTime)} /> : formatLocalTime(value, seconds)}
      {sayUtc && <span className="visually-hidden"> ({formatUtcTime(value)})</span>}
    </time>
  );
}

/**
 * A list cell's time, the day and the time of day each kept whole: a column short of room puts
 * the time of day under the day rather than stacking its whole table (`.list-time`). A zone
 * written "GMT+1" made the endpoints' Last success and Last failure 190 px wide on one line,
 * and the Outbound webhooks table too wide for 1280 px in Europe/Paris. The text is the same
 * either way (`Nov 25, 10:20 AM GMT+1`).
 */
function ListTime({ pieces }: { pieces: string[] }) {
  const [day, timeOfDay] = pieces;
  if (timeOfDay === undefined) return <>{day}</>;
  // The space between them is the cell's to wrap at: inside the day's piece it could not be.
  const dayAlone = day!.trimEnd();
  const between = day!.slice(dayAlone.length);
  return (
    <span className="list-time">
      <span>{dayAlone}</span>
      {between || <wbr />}
      <span>{timeOfDay}</span>
    </span>
  );
}
