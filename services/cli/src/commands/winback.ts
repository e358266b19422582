import { recordWinback } from '@retention/domain';
import { defineCommand } from '../command.js';
import { amount, currency, integer, text, uuid } from '../options.js';

export const winbackCommands = [
  defineCommand({
    name: 'winback record',
    summary: 'Record that a previously canceled customer re-subscribed (winback.recorded)',
    options: {
      customer: uuid('C').required(),
      'psp-subscription': text('ID', 255).required(),
      'days-away': integer('N', 0, 36_500).required(),
      amount: amount(0).required(),
      currency: currency().required(),
    },
    run: (context, options) =>
      recordWinback(context.db(), {
        customer_id: options.customer,
        psp_subscription_id: options['psp-subscription'],
        days_away: options['days-away'],
        amount_cents: options.amount,
        currency: options.currency,
      }),
  }),
];
