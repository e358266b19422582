import { PROCESSOR_STATUSES } from '@retention/core';
import { createWorkspace, updateWorkspace } from '@retention/domain';
import { defineCommand } from '../command.js';
import { currency, oneOf, text, uuid } from '../options.js';

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
  defineCommand({
    name: 'workspace update',
    summary: "Change a workspace's processor status or display currency",
    options: {
      id: uuid('W').required(),
      name: text('N', 200).optional(),
      processor: oneOf(PROCESSOR_STATUSES).optional(),
      'display-currency': currency().optional(),
    },
    run: (context, options) =>
      updateWorkspace(context.db(), options.id, {
        ...(options.name && { name: options.name }),
        ...(options.processor && { processor: options.processor }),
        ...(options['display-currency'] && { display_currency: options['display-currency'] }),
      }),
  }),
];
