import { declineCategoryOf } from '@retention/core';
import type { Transaction } from '@retention/db';

/**
 * The processor's payment attempts of a campaign's invoice (docs/processor.md, "Payment
 * attempts", migration 0041): each failed attempt, and when the processor will try next. The
 * processor's retries between a failure and a recovery are what a recovery "via retry" is, and
 * what an open campaign waits on; the campaign's page shows them (docs/dashboard-ui.md).
 *
 * Both are written in the transaction of what reported them (the processor event's, or the
 * demo's replay) and are order-safe: events arrive out of order and are redelivered.
 */

export interface FailedAttemptInput {
  workspace_id: string;
  campaign_id: string;
  /** The processor's count of attempts of the invoice, this one included (Stripe's `attempt_count`). */
  attempt_number: number;
  /** When it failed (the processor's time of the event). */
  failed_at: Date;
  decline_code: string;
}

/**
 * Records one failed attempt, once per (campaign, attempt number). Two reports of the same
 * attempt (a redelivery, or another event that counted the same attempt) keep the earlier one,
 * whichever arrives first. True when it recorded something new.
 */
export async function recordFailedAttempt(trx: Transaction, input: FailedAttemptInput): Promise<boolean> {
  const { rowCount } = await trx.raw<{ rowCount: number }>(
    `INSERT INTO campaign_payment_attempts AS a
            (campaign_id, attempt_number, workspace_id, failed_at, decline_code, decline_category)
     VALUES (?, ?, ?, ?, ?, ?)
     ON CONFLICT (campaign_id, attempt_number) DO UPDATE
        SET failed_at = excluded.failed_at, decline_code = excluded.decline_code,
            decline_category = excluded.decline_category
      WHERE excluded.failed_at < a.failed_at`,
    [
      input.campaign_id,
      input.attempt_number,
      input.workspace_id,
      input.failed_at,
      input.decline_code,
      declineCategoryOf(input.decline_code),
    ],
  );
  return rowCount > 0;
}

export interface NextAttemptInput {
  workspace_id: string;
  campaign_id: string;
  /** When the processor will try again; null when it said it will not (no retry scheduled). */
  next_attempt_at: Date | null;
  /** The processor's time of the event that said so: a fact older than the one kept never replaces it. */
  as_of: Date;
  /** That event's attempt count, which orders two facts of the same second. */
  attempt_count: number;
}

/**
 * Keeps the campaign's next attempt when this fact is newer than the one kept: a later event, or
 * one of the same time that counted more attempts. True when it replaced it.
 */
export async function noteNextAttempt(trx: Transaction, input: NextAttemptInput): Promise<boolean> {
  const updated = await trx('recovery_campaigns')
    .where({ workspace_id: input.workspace_id, id: input.campaign_id })
    .whereRaw(
      `(next_payment_attempt_as_of IS NULL
        OR (next_payment_attempt_as_of, next_payment_attempt_count) < (?::timestamptz, ?::int))`,
      [input.as_of, input.attempt_count],
    )
    .update({
      next_payment_attempt_at: input.next_attempt_at,
      next_payment_attempt_as_of: input.as_of,
      next_payment_attempt_count: input.attempt_count,
    });
  return updated > 0;
}
