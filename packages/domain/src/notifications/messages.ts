import type { Queryable } from '@retention/db';

/** The texts of the emails the service sends. Plain text: nothing a name could inject. */

export function invitationMessage(input: { workspace_name: string; role: string; invite_url: string }) {
  return {
    subject: `You are invited to ${oneLine(input.workspace_name)}`,
    text: [
      `You are invited to join the workspace "${oneLine(input.workspace_name)}" as ${input.role}.`,
      '',
      'Choose your name and password here (the link works once, for 7 days):',
      input.invite_url,
    ].join('\n'),
  };
}

export function passwordResetMessage(resetUrl: string) {
  return {
    subject: 'Reset your password',
    text: [
      'Someone asked to reset the password of this email address.',
      '',
      'Choose a new password here (the link works once, for 1 hour):',
      resetUrl,
      '',
      'If it was not you, ignore this email: your password stays as it is.',
    ].join('\n'),
  };
}

export function endpointDisabledMessage(input: {
  workspace_name: string;
  endpoint_name: string;
  url: string;
  link: string;
}) {
  return {
    subject: `Webhook endpoint "${oneLine(input.endpoint_name)}" was turned off`,
    text: [
      `The webhook endpoint "${oneLine(input.endpoint_name)}" (${input.url}) of ${oneLine(input.workspace_name)}`,
      'was turned off after 10 consecutive failed deliveries. Its pending deliveries were skipped.',
      '',
      'Fix the receiver, then turn the endpoint on again, and use "Retry failed since…" to',
      'send what it missed:',
      input.link,
    ].join('\n'),
  };
}

/**
 * To a workspace's owners when Stripe refuses its stored key (docs/processor.md, "When Stripe
 * refuses the key"): what happened, what it stops, where to fix it. Never the key, nor even its
 * last four: the email travels where the dashboard's sign-in does not.
 */
export function processorKeyRejectedMessage(input: { workspace_name: string; link: string }) {
  const workspace = oneLine(input.workspace_name);
  return {
    subject: `Stripe refused the API key of ${workspace}`,
    text: [
      `Stripe refused the restricted API key stored for the workspace "${workspace}" (401 Unauthorized):`,
      'the key was revoked or rolled in Stripe, or it expired. Stripe is disconnected until a working',
      'key is given.',
      '',
      'Until then:',
      '- outbound webhooks are paused: events recorded meanwhile are not sent to your endpoints, then or later;',
      "- Stripe's events still arrive and are applied, but decline codes are no longer looked up",
      '  (new campaigns open with "unknown");',
      '- an import that was running has stopped.',
      '',
      'In Stripe, create a restricted key with Read on customers, subscriptions, invoices, invoice',
      'payments, payment intents and events, then connect again with it on the Processor page:',
      input.link,
    ].join('\n'),
  };
}

/** The owners to tell, and the workspace's name, for the email above. */
export async function workspaceOwnerRecipients(db: Queryable, workspaceId: string) {
  const workspace = await db('workspaces').where({ id: workspaceId }).first<{ name: string } | undefined>('name');
  if (!workspace) return null;
  const emails = await db('users').where({ workspace_id: workspaceId, role: 'owner' }).pluck<string[]>('email');
  return { workspace_name: workspace.name, emails };
}

/** Owners and admins of the endpoint's workspace, with what the alert names. */
export async function endpointAlertRecipients(db: Queryable, endpointId: string) {
  const endpoint = await db('webhook_endpoints as e')
    .join('workspaces as w', 'w.id', 'e.workspace_id')
    .where('e.id', endpointId)
    .first<{ workspace_id: string; name: string; url: string; workspace_name: string } | undefined>(
      'e.workspace_id',
      'e.name',
      'e.url',
      'w.name as workspace_name',
    );
  if (!endpoint) return null;
  const emails = await db('users')
    .where({ workspace_id: endpoint.workspace_id })
    .whereIn('role', ['owner', 'admin'])
    .pluck<string[]>('email');
  return { ...endpoint, emails };
}

const oneLine = (text: string) => text.replace(/[\r\n]+/g, ' ');
