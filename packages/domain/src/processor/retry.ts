import { conflict, invalidField } from '@retention/core';
import { inTransaction, type Db } from '@retention/db';
import { recordSecurityEvent, type Actor } from '../security-log.js';
import { requireActor } from '../lookups.js';
import { connectionOfWorkspace, type ConnectionRow } from './connections.js';
import { rearmParkedEvents } from './inbox.js';

/**
 * Retrying parked events by hand (docs/processor.md, "Poison events"): the operator's
 * `processor retry` and the dashboard's Settings, Processor (owner). A parked event gave up
 * after its attempts, or at once on a refused value; once its cause is fixed (a permission
 * given to the key, a bug fixed and deployed) it deserves a new round of attempts. Stripe's
 * "Resend" of the event does the same through the inbox (storeProcessorEvents).
 */

/** Stripe's event ids: `evt_` and letters, digits or underscores. */
const STRIPE_EVENT_ID = /^evt_[A-Za-z0-9_]{1,250}$/;

export interface RetryParkedResult {
  /** The Stripe ids of the events given a new round of attempts. */
  retried: string[];
}

/**
 * Re-arms the workspace's parked events, or the one named by its Stripe id, and records who did
 * it in the security log (`processor.events_retried`, with the count and up to 20 ids). Nothing
 * parked (or the event named is not parked) is a conflict, in words.
 */
export async function retryParkedEvents(
  db: Db,
  workspaceId: string,
  actor: Actor,
  options: {
    psp_event_id?: string;
    /** The input's name for the id, for its error: the CLI's `event`, the dashboard API's `event_id`. */
    field?: string;
  } = {},
): Promise<RetryParkedResult> {
  const eventId = options.psp_event_id;
  if (eventId !== undefined && !STRIPE_EVENT_ID.test(eventId))
    throw invalidField(options.field ?? 'event', 'must be a Stripe event id (evt_…), as the status lists it');
  return inTransaction(db, async (trx) => {
    if (actor.user_id) await requireActor(trx, actor.user_id, workspaceId);
    const connection: ConnectionRow = await connectionOfWorkspace(trx, workspaceId);
    const retried = await rearmParkedEvents(trx, connection.id, eventId);
    if (retried.length === 0)
      throw conflict(
        eventId === undefined
          ? 'No event is parked, so there is nothing to retry'
          : `The event ${eventId} is not parked (applied, ignored, still being retried, or never received), so there is nothing to retry`,
      );
    await recordSecurityEvent(trx, {
      workspace_id: workspaceId,
      action: 'processor.events_retried',
      actor,
      target: { type: 'processor_connection', id: connection.id, label: connection.provider },
      details: { provider: connection.provider, count: retried.length, event_ids: retried.slice(0, 20) },
    });
    return { retried };
  });
}
