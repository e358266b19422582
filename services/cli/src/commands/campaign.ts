import { RECOVERED_VIA } from '@retention/core';
import { closeStaleCampaigns, openCampaign, operatorLoseCampaign, operatorRecoverCampaign } from '@retention/domain';
import { defineCommand, usageOf, UsageError, type Command } from '../command.js';
import { amount, currency, flag, integer, oneOf, pastTimestamp, text, uuid } from '../options.js';

const loseCommand: Command = defineCommand({
  name: 'campaign lose',
  summary: 'Close an open campaign as lost: by an operator (--actor) or because the processor gave up (--processor)',
  options: { id: uuid('K').required(), actor: uuid('U').optional(), processor: flag() },
  run: (context, options) => {
    if ((options.actor !== undefined) === options.processor) {
      throw new UsageError(
        `Give exactly one of --actor U (an operator marked it lost) or --processor (the processor gave up). Usage: ${usageOf(loseCommand)}`,
      );
    }
    return operatorLoseCampaign(
      context.db(),
      options.actor !== undefined
        ? { id: options.id, by: 'operator', actor_id: options.actor }
        : { id: options.id, by: 'processor' },
    );
  },
});

export const campaignCommands = [
  defineCommand({
    name: 'campaign open',
    summary: 'Open a recovery campaign on a failed invoice; a second failure of the invoice reports the existing one',
    options: {
      workspace: uuid('W').required(),
      customer: uuid('C').required(),
      subscription: uuid('S').required(),
      invoice: text('PSP_INVOICE_ID', 255).required(),
      amount: amount(1).required(),
      currency: currency().required(),
      'decline-code': text('CODE', 100).required(),
      'failed-at': pastTimestamp().optional(),
    },
    run: (context, options) =>
      openCampaign(context.db(), {
        workspace_id: options.workspace,
        customer_id: options.customer,
        subscription_id: options.subscription,
        psp_invoice_id: options.invoice,
        amount_cents: options.amount,
        currency: options.currency,
        decline_code: options['decline-code'],
        ...(options['failed-at'] !== undefined && { failed_at: options['failed-at'] }),
      }),
  }),
  defineCommand({
    name: 'campaign recover',
    summary: 'Close an open campaign as recovered',
    options: { id: uuid('K').required(), via: oneOf(RECOVERED_VIA).required(), actor: uuid('U').optional() },
    run: (context, options) =>
      operatorRecoverCampaign(context.db(), {
        id: options.id,
        via: options.via,
        ...(options.actor !== undefined && { actor_id: options.actor }),
      }),
  }),
  loseCommand,
  defineCommand({
    name: 'campaign close-stale',
    summary: 'Close open campaigns older than N days (default STALE_CAMPAIGN_DAYS) as abandoned',
    options: { workspace: uuid('W').optional(), 'older-than-days': integer('N', 1, 3650).optional() },
    run: (context, options) =>
      closeStaleCampaigns(context.db(), {
        olderThanDays: options['older-than-days'] ?? context.config.staleCampaignDays,
        ...(options.workspace !== undefined && { workspaceId: options.workspace }),
      }),
  }),
];
