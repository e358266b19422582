import { PROCESSOR_STATUSES } from '@retention/core';
import { createWorkspace, OPERATOR, updateWorkspaceSettings } from '@retention/domain';
import { defineCommand, usageOf, UsageError, type Command } from '../command.js';
import { currency, oneOf, text, uuid } from '../options.js';

const updateCommand: Command = defineCommand({
  name: 'workspace update',
  summary: "Change a workspace's name, processor status or display currency",
  options: {
    id: uuid('W').required(),
    name: text('N', 200).optional(),
    processor: oneOf(PROCESSOR_STATUSES).optional(),
    'display-currency': currency().optional(),
  },
  run: (context, options) => {
    if (options.name === undefined && options.processor === undefined && options['display-currency'] === undefined) {
      throw new UsageError(
        `Give at least one of --name, --processor or --display-currency to change. Usage: ${usageOf(updateCommand)}`,
      );
    }
    return updateWorkspaceSettings(
      context.db(),
      options.id,
      {
        ...(options.name && { name: options.name }),
        ...(options.processor && { processor: options.processor }),
        ...(options['display-currency'] && { display_currency: options['display-currency'] }),
      },
      OPERATOR,
    );
  },
});

export const workspaceCommands = [
  defineCommand({
    name: 'workspace create',
    summary: 'Create a workspace',
    options: {
      name: text('N', 200).required(),
      processor: oneOf(PROCESSOR_STATUSES).optional(),
      'display-currency': currency().optional(),
    },
    run: (context, options) =>
      createWorkspace(context.db(), {
        name: options.name,
        ...(options.processor && { processor: options.processor }),
        ...(options['display-currency'] && { display_currency: options['display-currency'] }),
      }),
  }),
  updateCommand,
];
