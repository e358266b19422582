import { useState } from 'react';
import { api } from '../../api/client.js';
import type { EndedOverlap, Endpoint } from '../../api/types.js';
import { ConfirmDialog } from '../../components/Dialog.js';
import { Time } from '../../components/Time.js';
import { useAction } from '../../use-action.js';

/** Until when the previous secret is still accepted, or null when no overlap is open (any more). */
export function openOverlapUntil(endpoint: Endpoint): string | null {
  const until = endpoint.previous_secret_expires_at;
  return until && Date.parse(until) > Date.now() ? until : null;
}

/**
 * End overlap now: the secret the last roll replaced stops signing, without a new roll
 * (docs/webhooks.md, "Ending an overlap early"). Shown only while an overlap is open, and
 * asks first: a receiver still verifying with that secret rejects deliveries from then on.
 *
 * The button goes once the overlap has ended, so the confirmation gives the focus back to
 * `returnFocusTo` (a control that stays), and `onEnded` must show the endpoint without its
 * overlap as the confirmation closes (in the same render), not after asking the API again.
 */
export function EndOverlap({
  endpoint,
  returnFocusTo,
  onEnded,
}: {
  endpoint: Endpoint;
  returnFocusTo?: HTMLElement;
  onEnded: (ended: EndedOverlap, message: string) => void;
}) {
  const [confirming, setConfirming] = useState(false);
  const ending = useAction();
  const until = openOverlapUntil(endpoint);
  if (!until) return null;

  const end = async () => {
    let ended: EndedOverlap | undefined;
    const done = await ending.run(async () => {
      ended = await api<EndedOverlap>('POST', `/webhooks/${endpoint.id}/end-overlap`);
    });
    if (!done || !ended) return;
    setConfirming(false);
    onEnded(
      ended,
      ended.ended_overlap_until
        ? 'Overlap ended: deliveries are signed with the current secret alone.'
        : 'The overlap had already ended: deliveries are signed with the current secret alone.',
    );
  };

  return (
    <>
      <button type="button" className="button" onClick={() => setConfirming(true)}>
        End overlap now
      </button>
      {confirming && (
        <ConfirmDialog
          title="End overlap now"
          message={
            <p>
              The previous signing secret is accepted until <Time value={until} />. End that now? Deliveries are then
              signed with the current secret alone, and a receiver still using the previous one rejects them.
            </p>
          }
          confirmLabel="End overlap"
          action={ending}
          onConfirm={() => void end()}
          onClose={() => setConfirming(false)}
          {...(returnFocusTo && { returnFocusTo })}
        />
      )}
    </>
  );
}
