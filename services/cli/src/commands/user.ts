import { notFound, USER_ROLES } from '@retention/core';
import { inTransaction } from '@retention/db';
import { createResetLink, createUser, inviteMember, operatorActor } from '@retention/domain';
import { defineCommand } from '../command.js';
import { email, oneOf, uuid } from '../options.js';

/** Who joins a workspace, as user create and user invite take them. */
const newMember = () => ({
  workspace: uuid('W').required(),
  email: email().required(),
  role: oneOf(USER_ROLES).required(),
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
    name: 'user invite',
    printsLinks: true,
    summary: 'Invite an email address with a role: prints the one-time link (7 days) to send them',
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
  defineCommand({
    name: 'user reset-link',
    printsLinks: true,
    summary: 'Print a one-time password-reset link (1 hour) for a user; their earlier links stop working',
    options: { id: uuid('U').required() },
    run: async (context, options) => {
      const db = context.db();
      return inTransaction(db, async (trx) => {
        const user = await trx('users')
          .where({ id: options.id })
          .first<{ id: string; workspace_id: string; email: string } | undefined>('id', 'workspace_id', 'email');
        if (!user) throw notFound(`No user with id ${options.id}`);
        return createResetLink(trx, user, context.config.baseUrl, { type: 'operator', label: 'operator CLI' });
      });
    },
  }),
];
