import { Type } from '@sinclair/typebox';
import {
  CANCEL_OUTCOMES,
  invalidField,
  CANCEL_REASON_CODES,
  isOneOf,
  OneOf,
  SAVED_OUTCOMES,
  type CancelOutcome,
  type CancelReasonCode,
  type CancelSession,
} from '@retention/core';
import { inTransaction, toCancelSession, type CancelSessionRow, type Db } from '@retention/db';
import { recordEvent } from './outbox.js';
import { assertSubscriptionOf, requireCustomer, requireSubscription } from './lookups.js';
import { getWorkspace } from './workspaces.js';
import { AmountInput, assertPastDate, CurrencyInput, CustomerText, IdInput, inputValidator } from './validate.js';

export interface RecordCancelSessionInput {
  workspace_id: string;
  customer_id: string;
  /** The subscription the customer tried to cancel, when the flow knew it. */
  subscription_id?: string;
  outcome: CancelOutcome;
  reason_code: CancelReasonCode;
  monthly_mrr_cents: number;
  currency: string;
  feedback?: string;
  /**
   * When the session ended (its row and its event), for a session the processor reported (the
   * time Stripe says the subscription was canceled); now when omitted. Not in the future.
   */
  at?: Date;
  /**
   * When the customer entered the flow (the row's `created_at`), when the caller knows it and it
   * is before `at`: the demo's sessions lasted a few minutes. `at` (or now) when omitted.
   */
  started_at?: Date;
}

const validateSession = inputValidator(
  Type.Object(
    {
      workspace_id: IdInput(),
      customer_id: IdInput(),
      subscription_id: Type.Optional(IdInput()),
      outcome: OneOf(CANCEL_OUTCOMES),
      reason_code: OneOf(CANCEL_REASON_CODES),
      // A free plan can be canceled too: zero is a real monthly amount.
      monthly_mrr_cents: AmountInput(0),
      currency: CurrencyInput(),
      feedback: Type.Optional(CustomerText(5000)),
    },
    { additionalProperties: false },
  ),
);

/**
 * Records a finished cancel session. A `saved_*` outcome emits `cancel.saved`, `canceled`
 * emits `cancel.lost`, `abandoned` (the customer left the flow) emits nothing. The session is
 * what the flow saw; the subscription itself is the processor's, and changes when it syncs.
 */
export async function recordCancelSession(db: Db, input: RecordCancelSessionInput): Promise<CancelSession> {
  const { at, started_at: startedAt, ...fields } = input;
  const valid = validateSession(fields);
  if (at !== undefined) assertPastDate(at, 'at');
  if (startedAt !== undefined) {
    assertPastDate(startedAt, 'started_at');
    if (startedAt.getTime() > (at ?? new Date()).getTime())
      throw invalidField('started_at', 'must not be after the end');
  }
  return inTransaction(db, async (trx) => {
    await getWorkspace(trx, valid.workspace_id);
    const customer = await requireCustomer(trx, valid.customer_id, valid.workspace_id);
    if (valid.subscription_id !== undefined) {
      assertSubscriptionOf(await requireSubscription(trx, valid.subscription_id, valid.workspace_id), customer.id);
    }
    const [session] = (await trx('cancel_sessions')
      .insert({
        workspace_id: valid.workspace_id,
        customer_id: customer.id,
        subscription_id: valid.subscription_id ?? null,
        outcome: valid.outcome,
        reason_code: valid.reason_code,
        feedback: valid.feedback ?? null,
        monthly_mrr_cents: valid.monthly_mrr_cents,
        currency: valid.currency,
        ...(at !== undefined && { created_at: at, ended_at: at }),
        ...(startedAt !== undefined && { created_at: startedAt }),
      })
      .returning('*')) as CancelSessionRow[];
    const row = session!;

    const eventFields = {
      session_id: row.id,
      reason_code: row.reason_code,
      customer_email: customer.email,
      monthly_mrr_cents: row.monthly_mrr_cents,
      currency: row.currency,
    };
    if (isOneOf(SAVED_OUTCOMES, row.outcome)) {
      await recordEvent(trx, row.workspace_id, 'cancel.saved', { ...eventFields, outcome: row.outcome }, at);
    } else if (row.outcome === 'canceled') {
      await recordEvent(trx, row.workspace_id, 'cancel.lost', { ...eventFields, outcome: row.outcome }, at);
    }
    return toCancelSession(row);
  });
}
