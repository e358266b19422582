import { Type } from '@sinclair/typebox';
import { conflict, PlainText, toIsoMillis } from '@retention/core';
import { inTransaction, type Db } from '@retention/db';
import { recordEvent } from './outbox.js';
import { requireCustomer } from './lookups.js';
import { AmountInput, assertPastDate, CurrencyInput, IdInput, inputValidator } from './validate.js';

/** A previously canceled customer who re-subscribed. */
export interface Winback {
  id: string;
  object: 'winback';
  workspace_id: string;
  customer_id: string;
  psp_subscription_id: string;
  days_away: number;
  amount_cents: number;
  currency: string;
  recorded_at: string;
  /** False when this processor subscription was already recorded (nothing new was written). */
  created: boolean;
}

interface WinbackRow {
  id: string;
  workspace_id: string;
  customer_id: string;
  psp_subscription_id: string;
  days_away: number;
  amount_cents: number;
  currency: string;
  recorded_at: Date;
}

function toWinback(row: WinbackRow, created: boolean): Winback {
  return {
    id: row.id,
    object: 'winback',
    workspace_id: row.workspace_id,
    customer_id: row.customer_id,
    psp_subscription_id: row.psp_subscription_id,
    days_away: row.days_away,
    amount_cents: row.amount_cents,
    currency: row.currency,
    recorded_at: toIsoMillis(row.recorded_at),
    created,
  };
}

export interface RecordWinbackInput {
  customer_id: string;
  workspace_id?: string;
  /** The processor's id of the new subscription. */
  psp_subscription_id: string;
  /** Whole days between the cancellation and the new subscription. */
  days_away: number;
  amount_cents: number;
  currency: string;
  /**
   * When the customer came back (the row's `recorded_at` and the event), for a win-back the
   * processor reported (the new subscription's time at Stripe); now when omitted. Not in the future.
   */
  at?: Date;
}

/** A hundred years: anything longer is a typo. */
const MAX_DAYS_AWAY = 36_500;

const validateWinback = inputValidator(
  Type.Object(
    {
      customer_id: IdInput(),
      workspace_id: Type.Optional(IdInput()),
      psp_subscription_id: PlainText(255),
      days_away: Type.Integer({
        minimum: 0,
        maximum: MAX_DAYS_AWAY,
        errorMessage: `must be a whole number of days between 0 and ${MAX_DAYS_AWAY}`,
      }),
      amount_cents: AmountInput(0),
      currency: CurrencyInput(),
    },
    { additionalProperties: false },
  ),
);

/**
 * Records a win-back and emits `winback.recorded`. One new processor subscription is one
 * win-back: recording it again with the same values (a replayed sync) writes nothing and
 * returns the first record with `created: false`. Other values, or another customer, for the
 * same processor subscription are a `conflict`: a different fact must not vanish silently.
 */
export async function recordWinback(db: Db, input: RecordWinbackInput): Promise<Winback> {
  const { at, ...fields } = input;
  const valid = validateWinback(fields);
  if (at !== undefined) assertPastDate(at, 'at');
  return inTransaction(db, async (trx) => {
    const customer = await requireCustomer(trx, valid.customer_id, valid.workspace_id);
    const [inserted] = (await trx('winbacks')
      .insert({
        workspace_id: customer.workspace_id,
        customer_id: customer.id,
        psp_subscription_id: valid.psp_subscription_id,
        days_away: valid.days_away,
        amount_cents: valid.amount_cents,
        currency: valid.currency,
        ...(at !== undefined && { recorded_at: at }),
      })
      .onConflict(['workspace_id', 'psp_subscription_id'])
      .ignore()
      .returning('*')) as WinbackRow[];

    if (!inserted) {
      const existing = (await trx('winbacks')
        .where({ workspace_id: customer.workspace_id, psp_subscription_id: valid.psp_subscription_id })
        .first()) as WinbackRow | undefined;
      if (!existing) throw new Error(`win-back of ${valid.psp_subscription_id} conflicted but does not exist`);
      if (existing.customer_id !== customer.id) {
        throw conflict(`Processor subscription ${valid.psp_subscription_id} is already a win-back of another customer`);
      }
      if (
        existing.days_away !== valid.days_away ||
        existing.amount_cents !== valid.amount_cents ||
        existing.currency !== valid.currency
      ) {
        throw conflict(
          `Processor subscription ${valid.psp_subscription_id} is already recorded as a win-back with other values ` +
            `(days_away ${existing.days_away}, amount_cents ${existing.amount_cents}, currency ${existing.currency})`,
        );
      }
      return toWinback(existing, false);
    }

    await recordEvent(
      trx,
      inserted.workspace_id,
      'winback.recorded',
      {
        winback_id: inserted.id,
        customer_email: customer.email,
        psp_subscription_id: inserted.psp_subscription_id,
        days_away: inserted.days_away,
        amount_cents: inserted.amount_cents,
        currency: inserted.currency,
      },
      at,
    );
    return toWinback(inserted, true);
  });
}
