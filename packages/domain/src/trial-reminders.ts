import { Type } from '@sinclair/typebox';
import { conflict, toIsoMillis } from '@retention/core';
import { inTransaction, type Db } from '@retention/db';
import { recordEvent } from './outbox.js';
import { requireSubscription } from './lookups.js';
import { assertPastDate, IdInput, inputValidator } from './validate.js';

/** A trial-ending reminder that was sent (the email itself is another system's job). */
export interface TrialReminder {
  id: string;
  object: 'trial_reminder';
  workspace_id: string;
  customer_id: string;
  subscription_id: string;
  trial_end: string;
  sent_at: string;
}

interface TrialReminderRow {
  id: string;
  workspace_id: string;
  customer_id: string;
  subscription_id: string;
  trial_end: Date;
  sent_at: Date;
}

function toTrialReminder(row: TrialReminderRow): TrialReminder {
  return {
    id: row.id,
    object: 'trial_reminder',
    workspace_id: row.workspace_id,
    customer_id: row.customer_id,
    subscription_id: row.subscription_id,
    trial_end: toIsoMillis(row.trial_end),
    sent_at: toIsoMillis(row.sent_at),
  };
}

const validateReminder = inputValidator(
  Type.Object({ subscription_id: IdInput(), workspace_id: Type.Optional(IdInput()) }, { additionalProperties: false }),
);

/**
 * Records that a trial-ending reminder was sent for a trialing subscription, and emits
 * `trial.reminder_sent` with the trial's end. Any other status, or a trial that has already
 * ended, is a `conflict`: there is no trial end to remind of.
 */
export async function sendTrialReminder(
  db: Db,
  input: {
    subscription_id: string;
    workspace_id?: string;
    /**
     * When the reminder went out (its row and its event), for one the processor reported (the
     * time of Stripe's notice); now when omitted. Not in the future.
     */
    at?: Date;
  },
): Promise<TrialReminder> {
  const { at, ...fields } = input;
  const valid = validateReminder(fields);
  if (at !== undefined) assertPastDate(at, 'at');
  return inTransaction(db, async (trx) => {
    const subscription = await requireSubscription(trx, valid.subscription_id, valid.workspace_id);
    if (subscription.status !== 'trialing') {
      throw conflict(`Subscription ${subscription.id} is ${subscription.status}, not trialing: it has no trial to end`);
    }
    if (subscription.trial_end === null) {
      throw conflict(`Subscription ${subscription.id} is trialing but has no trial end date`);
    }
    if (subscription.trial_end.getTime() <= Date.now()) {
      throw conflict(
        `The trial of subscription ${subscription.id} ended at ${toIsoMillis(subscription.trial_end)}: a trial-ending reminder comes before the end`,
      );
    }
    const [row] = (await trx('trial_reminders')
      .insert({
        workspace_id: subscription.workspace_id,
        customer_id: subscription.customer_id,
        subscription_id: subscription.id,
        trial_end: subscription.trial_end,
        ...(at !== undefined && { sent_at: at }),
      })
      .returning('*')) as TrialReminderRow[];
    const reminder = toTrialReminder(row!);
    await recordEvent(
      trx,
      reminder.workspace_id,
      'trial.reminder_sent',
      {
        reminder_id: reminder.id,
        customer_email: subscription.customer_email,
        subscription_id: reminder.subscription_id,
        trial_end: reminder.trial_end,
      },
      at,
    );
    return reminder;
  });
}
