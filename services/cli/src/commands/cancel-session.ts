import { CANCEL_OUTCOMES, CANCEL_REASON_CODES } from '@retention/core';
import { recordCancelSession } from '@retention/domain';
import { defineCommand } from '../command.js';
import { amount, currency, oneOf, text, uuid } from '../options.js';

export const cancelSessionCommands = [
  defineCommand({
    name: 'cancel-session record',
    summary: 'Record a finished cancel session (saved_* emits cancel.saved, canceled emits cancel.lost)',
    options: {
      workspace: uuid('W').required(),
      customer: uuid('C').required(),
      subscription: uuid('S').optional(),
      outcome: oneOf(CANCEL_OUTCOMES, 'O').required(),
      'reason-code': oneOf(CANCEL_REASON_CODES, 'R').required(),
      mrr: amount(0).required(),
      currency: currency().required(),
      feedback: text('TEXT', 5000, { multiline: true }).optional(),
    },
    run: (context, options) =>
      recordCancelSession(context.db(), {
        workspace_id: options.workspace,
        customer_id: options.customer,
        ...(options.subscription !== undefined && { subscription_id: options.subscription }),
        outcome: options.outcome,
        reason_code: options['reason-code'],
        monthly_mrr_cents: options.mrr,
        currency: options.currency,
        ...(options.feedback !== undefined && { feedback: options.feedback }),
      }),
  }),
];
