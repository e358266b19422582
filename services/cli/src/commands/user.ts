import { USER_ROLES } from '@retention/core';
import { createUser } from '@retention/domain';
import { defineCommand } from '../command.js';
import { email, oneOf, uuid } from '../options.js';

export const userCommands = [
  defineCommand({
    name: 'user create',
    summary: 'Add a user to a workspace',
    options: {
      workspace: uuid('W').required(),
      email: email().required(),
      role: oneOf(USER_ROLES).required(),
    },
    run: (context, options) =>
      createUser(context.db(), { workspace_id: options.workspace, email: options.email, role: options.role }),
  }),
];
