import { Type } from '@sinclair/typebox';
import { conflict, declineCategoryOf, PlainText, type RecoveryCampaign } from '@retention/core';
import { inTransaction, toCampaign, type CampaignRow, type Db } from '@retention/db';
import { recordEvent } from '../outbox.js';
import { assertSubscriptionOf, requireCustomer, requireSubscription } from '../lookups.js';
import { getWorkspace } from '../workspaces.js';
import { AmountInput, assertPastDate, CurrencyInput, IdInput, inputValidator } from '../validate.js';
import { campaignEventFields } from './event-data.js';

export interface OpenCampaignInput {
  workspace_id: string;
  customer_id: string;
  subscription_id: string;
  psp_invoice_id: string;
  amount_cents: number;
  currency: string;
  decline_code: string;
  /** When the payment first failed; now when omitted. */
  failed_at?: Date;
  /**
   * An import of history (the processor's backfill), like `fixtures load`: the campaign is
   * written but no `recovery.opened` goes out, since the failure happened before we knew.
   */
  silent?: boolean;
  /**
   * When the campaign opened (its row and its `recovery.opened`), for a replay of history (the
   * demo seed) or a failure the processor reported (its time at Stripe); now when omitted. Not
   * in the future.
   */
  at?: Date;
}

/** The campaign, and whether this call opened it (false: the invoice already had one). */
export type OpenedCampaign = RecoveryCampaign & { created: boolean };

const validateOpen = inputValidator(
  Type.Object(
    {
      workspace_id: IdInput(),
      customer_id: IdInput(),
      subscription_id: IdInput(),
      psp_invoice_id: PlainText(255),
      // A failed invoice is for something: a zero amount is never charged, so never declined.
      amount_cents: AmountInput(1),
      currency: CurrencyInput(),
      decline_code: PlainText(100),
    },
    { additionalProperties: false },
  ),
);

/**
 * Opens a recovery campaign on the first failed payment of an invoice (`in_flight`, event
 * `recovery.opened`). A later failure of the same invoice opens nothing and returns the
 * existing campaign with `created: false`; the unique (workspace, invoice) key makes that
 * hold under concurrent calls too.
 */
export async function openCampaign(db: Db, input: OpenCampaignInput): Promise<OpenedCampaign> {
  const { failed_at: failedAt, silent = false, at, ...fields } = input;
  const valid = validateOpen(fields);
  if (failedAt !== undefined) assertPastDate(failedAt, 'failed_at');
  if (at !== undefined) assertPastDate(at, 'at');

  return inTransaction(db, async (trx) => {
    await getWorkspace(trx, valid.workspace_id);
    const customer = await requireCustomer(trx, valid.customer_id, valid.workspace_id);
    const subscription = await requireSubscription(trx, valid.subscription_id, valid.workspace_id);
    assertSubscriptionOf(subscription, customer.id);

    const [opened] = (await trx('recovery_campaigns')
      .insert({
        workspace_id: valid.workspace_id,
        customer_id: customer.id,
        subscription_id: subscription.id,
        psp_invoice_id: valid.psp_invoice_id,
        amount_cents: valid.amount_cents,
        currency: valid.currency,
        status: 'in_flight',
        decline_code: valid.decline_code,
        decline_category: declineCategoryOf(valid.decline_code),
        // A failure "in the future" within the allowed clock skew happened now, on the
        // database clock that will time the close: a campaign never closes before it failed.
        first_failed_at: failedAt === undefined ? trx.fn.now() : trx.raw('least(?::timestamptz, now())', [failedAt]),
        ...(at !== undefined && { created_at: at, updated_at: at }),
      })
      .onConflict(['workspace_id', 'psp_invoice_id'])
      .ignore()
      .returning('*')) as CampaignRow[];

    if (!opened) {
      const existing = await trx<CampaignRow>('recovery_campaigns')
        .where({ workspace_id: valid.workspace_id, psp_invoice_id: valid.psp_invoice_id })
        .first();
      if (!existing) throw new Error(`invoice ${valid.psp_invoice_id} conflicted but has no campaign`);
      if (existing.customer_id !== customer.id || existing.subscription_id !== subscription.id) {
        throw conflict(
          `Invoice ${valid.psp_invoice_id} already has campaign ${existing.id}, for another customer or subscription`,
        );
      }
      return { ...toCampaign(existing), created: false };
    }

    if (silent) return { ...toCampaign(opened), created: true };
    await recordEvent(
      trx,
      valid.workspace_id,
      'recovery.opened',
      {
        ...campaignEventFields(opened, customer.email),
        decline_code: opened.decline_code,
        decline_category: opened.decline_category,
        psp_invoice_id: opened.psp_invoice_id,
      },
      at,
    );
    return { ...toCampaign(opened), created: true };
  });
}
