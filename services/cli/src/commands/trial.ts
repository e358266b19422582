import { sendTrialReminder } from '@retention/domain';
import { defineCommand } from '../command.js';
import { uuid } from '../options.js';

export const trialCommands = [
  defineCommand({
    name: 'trial remind',
    summary: 'Record that a trial-ending reminder was sent for a trialing subscription (trial.reminder_sent)',
    options: { subscription: uuid('S').required() },
    run: (context, options) => sendTrialReminder(context.db(), { subscription_id: options.subscription }),
  }),
];
