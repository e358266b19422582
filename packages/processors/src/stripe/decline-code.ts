import type Stripe from 'stripe';
import {
  isKeyRejected,
  isNotFound,
  isPermissionDenied,
  StripeKeyRejectedError,
  StripePermissionMissingError,
} from './client.js';
import { idOf, int, isObject, str, type StripeObject } from './objects.js';

/**
 * The decline code of an invoice's failed payment: the payment intent's `last_payment_error`
 * (`decline_code` for a card decline, else its `code`, such as `expired_card`). An invoice
 * event carries the payment intent's id only, so it is learnt through the API key: before
 * basil from `invoice.payment_intent`, from basil on from the invoice's InvoicePayments.
 * `unknown` when there is no key or Stripe has nothing to say.
 */
export const UNKNOWN_DECLINE = 'unknown';

function declineCodeOfPaymentIntent(paymentIntent: unknown): string | null {
  if (!isObject(paymentIntent) || !isObject(paymentIntent.last_payment_error)) return null;
  const error = paymentIntent.last_payment_error;
  const code = str(error.decline_code) ?? str(error.code);
  return code && /^[a-z0-9_]{1,100}$/.test(code) ? code : null;
}

export async function declineCodeOfInvoice(invoice: StripeObject, stripe: Stripe | null): Promise<string> {
  // An expanded payment intent (some integrations expand it) says it without a call.
  const inline = declineCodeOfPaymentIntent(invoice.payment_intent);
  if (inline) return inline;
  if (stripe === null) return UNKNOWN_DECLINE;
  try {
    const paymentIntentId = idOf(invoice.payment_intent);
    if (paymentIntentId) {
      const paymentIntent = await stripe.paymentIntents.retrieve(paymentIntentId);
      return declineCodeOfPaymentIntent(paymentIntent) ?? UNKNOWN_DECLINE;
    }
    const invoiceId = str(invoice.id);
    if (!invoiceId) return UNKNOWN_DECLINE;
    const payments = await stripe.invoicePayments.list({
      invoice: invoiceId,
      limit: 10,
      expand: ['data.payment.payment_intent'],
    });
    // The newest payment that failed is the one this event reports.
    const failed = (payments.data as unknown as StripeObject[])
      .map((payment) => ({
        created: int(payment.created) ?? 0,
        code: declineCodeOfPaymentIntent(isObject(payment.payment) ? payment.payment.payment_intent : null),
      }))
      .filter((payment) => payment.code !== null)
      .sort((a, b) => b.created - a.created);
    return failed[0]?.code ?? UNKNOWN_DECLINE;
  } catch (error) {
    if (isKeyRejected(error)) throw new StripeKeyRejectedError();
    if (isNotFound(error)) return UNKNOWN_DECLINE;
    if (isPermissionDenied(error)) throw new StripePermissionMissingError(error, 'the decline code');
    throw error;
  }
}
