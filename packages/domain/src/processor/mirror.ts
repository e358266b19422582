import { Type } from '@sinclair/typebox';
import {
  invalidField,
  notFound,
  OneOf,
  PlainText,
  SUBSCRIPTION_INTERVALS,
  SUBSCRIPTION_STATUSES,
} from '@retention/core';
import { inTransaction, type CustomerRow, type Db, type SubscriptionRow, type Transaction } from '@retention/db';
import { normalizeTags } from '../tags.js';
import { AmountInput, CurrencyInput, IdInput, inputValidator } from '../validate.js';

/**
 * The customers and subscriptions mirrored from the payment processor, written as the
 * processor reports them. Neither has a webhook event of its own (docs/webhooks.md, "Event types"), so an upsert
 * records none; the processor adapter decides which events a change implies and calls the
 * actions that emit them.
 */

export interface UpsertCustomerInput {
  workspace_id: string;
  psp_customer_id: string;
  email: string;
  name: string | null;
  tags: string[];
  /** When the processor created it; kept from the first write. */
  created_at?: Date;
}

const validateCustomer = inputValidator(
  Type.Object(
    {
      workspace_id: IdInput(),
      psp_customer_id: PlainText(255),
      email: Type.String({ pattern: '^[^@\\s]+@[^@\\s]+$', maxLength: 320, errorMessage: 'must be an email address' }),
      name: Type.Union([PlainText(500), Type.Null()]),
      tags: Type.Array(Type.String({ maxLength: 100 }), { maxItems: 100 }),
    },
    { additionalProperties: false },
  ),
);

/**
 * Runs `work` in the caller's transaction when there is one (the processor's apply, whose
 * batch or event savepoint already rolls a failure back: a savepoint here would only add two
 * round trips per event), else in a transaction of its own.
 */
function withinTransaction<T>(db: Db, work: (trx: Transaction) => Promise<T>): Promise<T> {
  return db.isTransaction ? work(db as Transaction) : inTransaction(db, work);
}

/** Dates are checked here: JSON schemas describe JSON, and a Date is not. */
function assertDates(values: Record<string, Date | null | undefined>): void {
  for (const [field, value] of Object.entries(values)) {
    if (value === null || value === undefined) continue;
    if (!(value instanceof Date) || Number.isNaN(value.getTime()))
      throw invalidField(field, 'must be a valid timestamp');
  }
}

export async function upsertCustomer(db: Db, input: UpsertCustomerInput): Promise<CustomerRow & { created: boolean }> {
  const { created_at: createdAt, ...fields } = input;
  const valid = validateCustomer(fields);
  assertDates({ created_at: createdAt });
  return withinTransaction(db, async (trx) => {
    // One statement: the row is locked (updated) when it exists, inserted when not; `created`
    // says which (a row this statement inserted has no xmax). No row at all: no such workspace.
    const { rows } = await trx.raw<{ rows: Array<CustomerRow & { created: boolean }> }>(
      `INSERT INTO customers (workspace_id, psp_customer_id, email, name, tags, created_at)
       SELECT w.id, ?, ?, ?, ?::text[], coalesce(?::timestamptz, now()) FROM workspaces AS w WHERE w.id = ?
       ON CONFLICT (workspace_id, psp_customer_id)
       DO UPDATE SET email = excluded.email, name = excluded.name, tags = excluded.tags, updated_at = now()
       RETURNING *, (xmax = 0) AS created`,
      [
        valid.psp_customer_id,
        valid.email,
        valid.name,
        normalizeTags(valid.tags),
        createdAt ?? null,
        valid.workspace_id,
      ],
    );
    if (!rows[0]) throw notFound(`No workspace with id ${valid.workspace_id}`);
    return rows[0];
  });
}

export type UpsertSubscriptionInput = Omit<SubscriptionRow, 'id' | 'created_at'> & { created_at?: Date };

const validateSubscription = inputValidator(
  Type.Object(
    {
      workspace_id: IdInput(),
      customer_id: IdInput(),
      psp_subscription_id: PlainText(255),
      status: OneOf(SUBSCRIPTION_STATUSES),
      plan_name: PlainText(500),
      amount_cents: AmountInput(0),
      currency: CurrencyInput(),
      interval: OneOf(SUBSCRIPTION_INTERVALS),
    },
    { additionalProperties: false },
  ),
);

/**
 * Creates or updates the subscription the processor knows as `psp_subscription_id`. It stays
 * with the customer it was created for: a processor subscription never changes customer.
 */
export async function upsertSubscription(
  db: Db,
  input: UpsertSubscriptionInput,
): Promise<SubscriptionRow & { created: boolean }> {
  const {
    trial_end: trialEnd,
    current_period_end: periodEnd,
    canceled_at: canceledAt,
    created_at: createdAt,
    ...fields
  } = input;
  const valid = validateSubscription(fields);
  assertDates({ trial_end: trialEnd, current_period_end: periodEnd, canceled_at: canceledAt, created_at: createdAt });
  return withinTransaction(db, async (trx) => {
    const customer = await trx<CustomerRow>('customers')
      .where({ id: valid.customer_id, workspace_id: valid.workspace_id })
      .first();
    if (!customer) throw new Error(`customer ${valid.customer_id} is not in workspace ${valid.workspace_id}`);
    const values = {
      status: valid.status,
      plan_name: valid.plan_name,
      amount_cents: valid.amount_cents,
      currency: valid.currency,
      interval: valid.interval,
      trial_end: trialEnd,
      current_period_end: periodEnd,
      canceled_at: canceledAt,
    };
    const existing = await trx<SubscriptionRow>('subscriptions')
      .where({ workspace_id: valid.workspace_id, psp_subscription_id: valid.psp_subscription_id })
      .forUpdate()
      .first();
    if (existing) {
      const [row] = (await trx('subscriptions')
        .where({ id: existing.id })
        .update({ ...values, updated_at: trx.fn.now() })
        .returning('*')) as SubscriptionRow[];
      return { ...row!, created: false };
    }
    const [row] = (await trx('subscriptions')
      .insert({
        workspace_id: valid.workspace_id,
        customer_id: customer.id,
        psp_subscription_id: valid.psp_subscription_id,
        ...values,
        ...(createdAt !== undefined && { created_at: createdAt }),
      })
      .returning('*')) as SubscriptionRow[];
    return { ...row!, created: true };
  });
}
