import { Time } from '../../components/Time.js';
import { formatNumber } from '../../format.js';

/** `deliveries_refused` of GET /processor (docs/processor.md, "Refused deliveries"). */
export interface Refused {
  count: number;
  since: string;
  last_at: string;
  none_accepted_since: boolean;
}

/**
 * The status line's words for a `connected` connection whose every delivery since the first
 * refusal was refused: "Connected and syncing" said the opposite of what was happening.
 */
export const REFUSING_STATUS_TEXT = 'Connected, but its deliveries are refused';

export const allRefused = (refused: Refused | null | undefined) => refused?.none_accepted_since === true;

/**
 * Deliveries refused for a bad or stale signature since the signing secret was set: a mistyped
 * or outdated secret makes Stripe's every event a 400, which nothing on the page used to show.
 */
export function RefusedDeliveries({ refused }: { refused: Refused | null }) {
  if (!refused) return null;
  return (
    <p className="notice" role="note" aria-label="Refused deliveries">
      {formatNumber(refused.count)} {refused.count === 1 ? 'delivery' : 'deliveries'} refused for a bad signature since{' '}
      <Time value={refused.since} />, the last at <Time value={refused.last_at} />: check the signing secret
      {allRefused(refused) && ' (none was accepted since, so nothing new arrives from Stripe)'}.
    </p>
  );
}
