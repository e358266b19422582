import { sendReactivation } from '@retention/domain';
import { defineCommand } from '../command.js';
import { uuid } from '../options.js';

export const reactivationCommands = [
  defineCommand({
    name: 'reactivation send',
    summary: 'Record that a win-back email was sent for a canceled subscription (reactivation.sent)',
    options: { subscription: uuid('S').required() },
    run: (context, options) => sendReactivation(context.db(), { subscription_id: options.subscription }),
  }),
];
