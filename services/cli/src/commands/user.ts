import { USER_ROLES } from '@retention/core';
import { inTransaction } from '@retention/db';
import {
  createResetLink,
  createUser,
  findUserForResetLink,
  inviteMember,
  listWorkspaceUsers,
  operatorActor,
} from '@retention/domain';
import { defineCommand, usageOf, UsageError, type Command } from '../command.js';
import { email, oneOf, uuid } from '../options.js';

/** Who joins a workspace, as user create and user invite take them. */
const newMember = () => ({
  workspace: uuid('W').required(),
  email: email().required(),
  role: oneOf(USER_ROLES).required(),
});

// An operator is told an address more often than an id: either names the person.
const resetLinkCommand: Command = defineCommand({
  name: 'user reset-link',
  printsLinks: true,
  summary:
    'Print a one-time password-reset link (1 hour) for a user, by --id or by --workspace and --email; their earlier links stop working',
  options: { id: uuid('U').optional(), workspace: uuid('W').optional(), email: email().optional() },
  run: async (context, options) => {
    const byAddress = options.workspace !== undefined && options.email !== undefined;
    const partial = options.workspace !== undefined || options.email !== undefined;
    if ((options.id !== undefined) === partial || (partial && !byAddress)) {
      throw new UsageError(
        `Give either --id U, or --workspace W with --email E (user list shows both). Usage: ${usageOf(resetLinkCommand)}`,
      );
    }
    const db = context.db();
    const key =
      options.id !== undefined ? { id: options.id } : { workspace_id: options.workspace!, email: options.email! };
    return inTransaction(db, async (trx) => {
      const user = await findUserForResetLink(trx, key);
      return createResetLink(trx, user, context.config.baseUrl, { type: 'operator', label: 'operator CLI' });
    });
  },
});

export const userCommands = [
  defineCommand({
    name: 'user create',
    summary: 'Add a user to a workspace',
    options: newMember(),
    run: (context, options) =>
      createUser(context.db(), { workspace_id: options.workspace, email: options.email, role: options.role }),
  }),
  defineCommand({
    name: 'user list',
    summary: "List a workspace's people: id, email, name, role, whether they can sign in, last sign-in",
    options: { workspace: uuid('W').required() },
    run: async (context, options) => ({
      object: 'list',
      data: await listWorkspaceUsers(context.db(), options.workspace),
    }),
  }),
  defineCommand({
    name: 'user invite',
    printsLinks: true,
    summary:
      "Invite an email address with a role: prints the one-time link (7 days) to send them; the id printed is the invitation's (user list shows the person's once they accept)",
    options: { ...newMember(), actor: uuid('U').optional() },
    run: async (context, options) => {
      const db = context.db();
      const result = await inviteMember(
        db,
        {
          workspace_id: options.workspace,
          email: options.email,
          role: options.role,
          inviter_role: null,
          base_url: context.config.baseUrl,
        },
        await operatorActor(db, options.workspace, options.actor),
      );
      return {
        id: result.invitation.id,
        email: result.invitation.email,
        role: result.invitation.role,
        invite_url: result.invite_url,
        expires_at: result.invitation.expires_at,
      };
    },
  }),
  resetLinkCommand,
];
