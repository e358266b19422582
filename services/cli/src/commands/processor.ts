import {
  disconnectProcessor,
  OPERATOR,
  processorSetup,
  processorStatus,
  PROCESSOR_PROVIDERS,
  requestBackfill,
  retryParkedEvents,
  type Actor,
} from '@retention/domain';
import { connectStripe } from '@retention/processors';
import { defineCommand } from '../command.js';
import { flag, oneOf, text, uuid } from '../options.js';

/**
 * `processor connect | disconnect | status | sync | retry` (operator-cli.md, docs/processor.md). The
 * secrets are taken once and never printed again: the output shows their last four characters.
 */

const actorOf = (userId: string | undefined): Actor =>
  userId === undefined ? OPERATOR : { ...OPERATOR, user_id: userId };

export const processorCommands = [
  defineCommand({
    name: 'processor connect',
    printsLinks: true,
    summary: "Connect a workspace's Stripe account: the webhook signing secret, and optionally a restricted API key",
    options: {
      workspace: uuid('W').required(),
      provider: oneOf(PROCESSOR_PROVIDERS).required(),
      'webhook-secret': text('whsec_...', 300).required(),
      'api-key': text('rk_...', 300).optional(),
      // A key of the other mode (test, live) than the connection's is refused without it.
      'confirm-mode-switch': flag(),
      actor: uuid('U').optional(),
    },
    run: async (context, options) => {
      const apiKey = options['api-key'];
      const db = context.db();
      const connection = await connectStripe(
        db,
        context.config,
        {
          workspace_id: options.workspace,
          webhook_secret: options['webhook-secret'],
          ...(apiKey !== undefined && { api_key: apiKey }),
          ...(options['confirm-mode-switch'] === true && { confirm_mode_switch: true }),
        },
        actorOf(options.actor),
      );
      return {
        connection_id: connection.id,
        ...(await processorStatus(db, context.config.baseUrl, options.workspace)),
      };
    },
  }),
  defineCommand({
    name: 'processor disconnect',
    printsLinks: true,
    summary: "Disconnect a workspace's processor: its events are refused and webhooks stop",
    options: { workspace: uuid('W').required(), actor: uuid('U').optional() },
    run: async (context, options) => {
      const db = context.db();
      await disconnectProcessor(db, options.workspace, actorOf(options.actor));
      return processorStatus(db, context.config.baseUrl, options.workspace);
    },
  }),
  defineCommand({
    name: 'processor status',
    printsLinks: true,
    summary:
      "A workspace's processor connection: status, webhook URL, last event, backfill, parked events (before connecting: the URL to register in Stripe)",
    options: { workspace: uuid('W').required() },
    run: (context, options) =>
      processorSetup(context.db(), context.config.secretsKey, context.config.baseUrl, options.workspace),
  }),
  defineCommand({
    name: 'processor sync',
    printsLinks: true,
    summary: 'Start a backfill of customers, subscriptions and open invoices (needs the API key)',
    options: { workspace: uuid('W').required() },
    run: async (context, options) => {
      const db = context.db();
      await requestBackfill(db, options.workspace);
      return processorStatus(db, context.config.baseUrl, options.workspace);
    },
  }),
  defineCommand({
    name: 'processor retry',
    printsLinks: true,
    summary: 'Give parked processor events a new round of attempts: all of them, or the one --event names (logged)',
    options: { workspace: uuid('W').required(), event: text('evt_...', 255).optional(), actor: uuid('U').optional() },
    run: async (context, options) => {
      const db = context.db();
      const { retried } = await retryParkedEvents(db, options.workspace, actorOf(options.actor), {
        ...(options.event !== undefined && { psp_event_id: options.event }),
      });
      return { retried, ...(await processorStatus(db, context.config.baseUrl, options.workspace)) };
    },
  }),
];
