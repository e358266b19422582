import {
  createEndpoint,
  createWebhookSender,
  webhookSenderOptions,
  deleteEndpoint,
  getEndpoint,
  listDeliveryLog,
  listEndpoints,
  MAX_DELIVERY_LOG_LIMIT,
  MAX_SECRET_OVERLAP_SECONDS,
  recoverDeliveries,
  RESEND_LEASE_MARGIN_MS,
  resendDelivery,
  rollSigningSecret,
  sendTestWebhook,
  enableEndpoint,
  disableEndpoint,
  endSecretOverlap,
  updateEndpoint,
  type WebhookSender,
} from '@retention/domain';
import type { Config } from '@retention/core';
import type { Db } from '@retention/db';
import { defineCommand, FailedResult } from '../command.js';
import { durationSeconds, eventTypes, flag, integer, pastTimestamp, text, uuid } from '../options.js';

/** An endpoint's name and URL, as create and update take them. */
const endpointName = text('N', 200);
const endpointUrl = text('URL', 4096);

/** enable, disable, delete: the endpoint, the acting user, and the domain's action on them. */
function endpointAction(
  name: string,
  summary: string,
  action: (db: Db, input: { id: string; actor_id: string }) => Promise<unknown>,
) {
  return defineCommand({
    name,
    summary,
    options: { id: uuid('E').required(), actor: uuid('U').required() },
    run: (context, options) => action(context.db(), { id: options.id, actor_id: options.actor }),
  });
}

/** Sends through a sender of its own, closed once `send` is done. */
async function withSender<T>(config: Config, send: (sender: WebhookSender) => Promise<T>): Promise<T> {
  const sender = createWebhookSender(webhookSenderOptions(config));
  try {
    return await send(sender);
  } finally {
    sender.close();
  }
}

/** The dashboard's Settings, Outbound webhooks: endpoints, Send test and the delivery log. */
export const webhookCommands = [
  defineCommand({
    name: 'webhook create',
    summary: 'Add a webhook endpoint; its whsec_ signing secret is printed once, here, and never again',
    options: {
      workspace: uuid('W').required(),
      actor: uuid('U').required(),
      name: endpointName.required(),
      url: endpointUrl.required(),
      events: eventTypes().optional(),
    },
    run: (context, options) =>
      createEndpoint(context.db(), context.config.secretsKey, {
        workspace_id: options.workspace,
        actor_id: options.actor,
        name: options.name,
        url: options.url,
        ...(options.events && { events: options.events }),
      }),
  }),
  defineCommand({
    name: 'webhook list',
    summary: "List a workspace's webhook endpoints, newest first (never their secrets)",
    options: { workspace: uuid('W').required() },
    run: async (context, options) => ({ object: 'list', data: await listEndpoints(context.db(), options.workspace) }),
  }),
  defineCommand({
    name: 'webhook show',
    summary: 'Show a webhook endpoint: state, failure count, last success and failure',
    options: { id: uuid('E').required() },
    run: (context, options) => getEndpoint(context.db(), options.id),
  }),
  defineCommand({
    name: 'webhook update',
    summary: "Change an endpoint's name, URL or subscribed events (all: every type)",
    options: {
      id: uuid('E').required(),
      actor: uuid('U').required(),
      name: endpointName.optional(),
      url: endpointUrl.optional(),
      events: eventTypes().optional(),
    },
    run: (context, options) =>
      updateEndpoint(context.db(), options.id, {
        actor_id: options.actor,
        ...(options.name !== undefined && { name: options.name }),
        ...(options.url !== undefined && { url: options.url }),
        ...(options.events !== undefined && { events: options.events }),
      }),
  }),
  endpointAction(
    'webhook enable',
    'Turn an endpoint on: clears its failure count; new events flow to it again',
    enableEndpoint,
  ),
  endpointAction(
    'webhook disable',
    'Turn an endpoint off: its pending deliveries are skipped (and logged as such)',
    disableEndpoint,
  ),
  endpointAction('webhook delete', 'Delete an endpoint and its delivery log', deleteEndpoint),
  defineCommand({
    name: 'webhook test',
    summary:
      'Send test: POST a signed ping to the endpoint now; prints the result, recorded in the log. ' +
      'A receiver that fails is a result (exit 0); with --fail it exits 1 (delivery_failed)',
    options: { id: uuid('E').required(), actor: uuid('U').required(), fail: flag() },
    run: async (context, options) => {
      const attempt = await withSender(context.config, (sender) =>
        sendTestWebhook(context.db(), context.config.secretsKey, sender, options.id, options.actor),
      );
      return failIfAsked(attempt, options.fail, 'test delivery');
    },
  }),
  defineCommand({
    name: 'webhook deliveries',
    summary: "An endpoint's delivery log, newest first",
    options: { id: uuid('E').required(), limit: integer('N', 1, MAX_DELIVERY_LOG_LIMIT).optional() },
    run: async (context, options) => ({
      object: 'list',
      data: await listDeliveryLog(context.db(), options.id, {
        ...(options.limit !== undefined && { limit: options.limit }),
      }),
    }),
  }),
  defineCommand({
    name: 'webhook roll-secret',
    summary:
      'Give an endpoint a new signing secret, printed once; --overlap keeps the old one signing too (max 24h); ' +
      "refused during an earlier roll's overlap unless --end-overlap stops that secret now",
    options: {
      id: uuid('E').required(),
      actor: uuid('U').required(),
      overlap: durationSeconds(MAX_SECRET_OVERLAP_SECONDS).optional(),
      'end-overlap': flag(),
    },
    run: (context, options) =>
      rollSigningSecret(context.db(), context.config.secretsKey, {
        endpoint_id: options.id,
        actor_id: options.actor,
        ...(options.overlap !== undefined && { overlap_seconds: options.overlap }),
        ...(options['end-overlap'] && { end_overlap: true }),
      }),
  }),
  defineCommand({
    name: 'webhook end-overlap',
    summary:
      "End a roll's overlap now, without rolling: the secret it replaced stops signing; " +
      'with no overlap open, changes nothing (ended_overlap_until null)',
    options: { id: uuid('E').required(), actor: uuid('U').required() },
    run: (context, options) => endSecretOverlap(context.db(), { endpoint_id: options.id, actor_id: options.actor }),
  }),
  defineCommand({
    name: 'webhook recover',
    summary:
      'Re-queue every failed or skipped delivery of an endpoint created since a time, once each ' +
      '(events recorded while it was off included)',
    options: { id: uuid('E').required(), since: pastTimestamp().required(), actor: uuid('U').required() },
    // `{requeued: N}`, as the operator CLI's contract has it (spec operator-cli.md): the dashboard's
    // `retrying` count is the page's, not part of this output.
    run: async (context, options) => {
      const { requeued } = await recoverDeliveries(context.db(), {
        endpoint_id: options.id,
        actor_id: options.actor,
        since: options.since,
      });
      return { requeued };
    },
  }),
  defineCommand({
    name: 'webhook resend',
    summary:
      "Send one delivery's event again now, as its next attempt; prints the attempt (as webhook test), " +
      'exit 0 whatever the receiver answered; with --fail an attempt that failed exits 1 (delivery_failed)',
    options: { delivery: uuid('D').required(), actor: uuid('U').required(), fail: flag() },
    run: async (context, options) => {
      const attempt = await withSender(context.config, (sender) =>
        resendDelivery(context.db(), context.config.secretsKey, sender, {
          delivery_id: options.delivery,
          actor_id: options.actor,
          lease_ms: context.config.webhookTimeoutMs + RESEND_LEASE_MARGIN_MS,
        }),
      );
      return failIfAsked(attempt, options.fail, 'resent delivery');
    },
  }),
];

/**
 * A sent attempt is the command's output either way (operator-cli.md: a receiver that fails
 * is a result, exit 0); `--fail` adds the exit status a script tests: 1 when the attempt did
 * not succeed, the attempt still on stdout and one line on stderr.
 */
function failIfAsked<T extends { outcome: string; error: string | null }>(attempt: T, fail: boolean, what: string): T {
  if (fail && attempt.outcome !== 'succeeded') {
    throw new FailedResult(
      attempt,
      'delivery_failed',
      `The ${what} failed: ${attempt.error ?? attempt.outcome}. The attempt is on stdout and in the delivery log.`,
    );
  }
  return attempt;
}
