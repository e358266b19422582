import { createToken, listTokens, MAX_RATE_LIMIT_PER_MINUTE, revokeToken, setTokenRateLimit } from '@retention/domain';
import { defineCommand } from '../command.js';
import { integer, text, uuid } from '../options.js';

export const tokenCommands = [
  defineCommand({
    name: 'token create',
    summary: 'Mint an API token; its value is printed once, here, and never again',
    options: {
      workspace: uuid('W').required(),
      name: text('N', 200).required(),
      'rate-limit': integer('PER_MINUTE', 1, MAX_RATE_LIMIT_PER_MINUTE).optional(),
    },
    run: (context, options) =>
      createToken(context.db(), {
        workspace_id: options.workspace,
        name: options.name,
        ...(options['rate-limit'] !== undefined && { rate_limit_per_minute: options['rate-limit'] }),
      }),
  }),
  defineCommand({
    name: 'token list',
    summary: "List a workspace's tokens (never their values)",
    options: { workspace: uuid('W').required() },
    run: async (context, options) => ({ object: 'list', data: await listTokens(context.db(), options.workspace) }),
  }),
  defineCommand({
    name: 'token revoke',
    summary: 'Revoke a token: the next request with it gets 401',
    options: { id: uuid('T').required() },
    run: (context, options) =>
      revokeToken(context.db(), { id: options.id }, { announce: () => context.announceTokenChange() }),
  }),
  defineCommand({
    name: 'token set-limit',
    summary: "Set a token's requests per minute",
    options: {
      id: uuid('T').required(),
      'per-minute': integer('N', 1, MAX_RATE_LIMIT_PER_MINUTE).required(),
    },
    run: (context, options) =>
      setTokenRateLimit(
        context.db(),
        { id: options.id, rate_limit_per_minute: options['per-minute'] },
        { announce: () => context.announceTokenChange() },
      ),
  }),
];
