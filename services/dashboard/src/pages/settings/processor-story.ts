/**
 * One account of the workspace's payment processor, for the Workspace and Processor pages alike.
 * Two things are told apart (docs/processor.md): the workspace's processor status, the flag that
 * decides whether outbound webhooks are sent, and a Stripe connection, which sets that flag but is
 * not the only way to (the operator CLI, fixtures and the demo set it with no Stripe behind it).
 * The pages used to tell these in their own words, and so contradicted each other: "Status: Not
 * connected" on one, "counts as connected" on the other.
 */

/**
 * What GET /processor (the Processor page) and GET /workspace's `processor_connection_status`
 * (the Workspace page, every role) say of Stripe, declared here only: the Processor page's
 * types of that answer take theirs from it.
 */
export type StripeStatus = 'not_connected' | 'pending' | 'connected' | 'disconnected';

export const STRIPE_STATUS_TEXT: Record<StripeStatus, string> = {
  not_connected: 'Not connected',
  pending: 'Waiting for the first event from Stripe',
  connected: 'Connected and syncing',
  disconnected: 'Disconnected',
};

/**
 * The whole account for every role: a member was told only the flag's half ("the payment
 * processor is connected"), not whether Stripe is behind it. Only an owner may connect Stripe
 * (`canConnect`): anyone else is told who can, not asked to. `refused`: every delivery since the
 * first refused for a bad signature (the Processor page's RefusedDeliveries, which the Workspace
 * page does not read), when "its events arrive by themselves" said the opposite of the note.
 * `besideStatus`: the Processor page, whose line above already says Stripe's status ("Stripe:
 * Not connected"), is told only what follows from it: it read "Stripe: Not connected" and then
 * "Stripe is not connected." (found in a new owner's walk through the page).
 */
export function processorStory(
  flag: string,
  stripe: StripeStatus,
  canConnect: boolean,
  refused = false,
  besideStatus = false,
): string {
  const sent = flag === 'connected';
  if (stripe === 'not_connected' && sent) {
    // In the customer's words: what this workspace has, not how the operator brought it in.
    const records =
      "This workspace's records were added without Stripe (imported, or demo data), and outbound webhooks are sent " +
      'for them.';
    if (besideStatus) return `${records} Connect Stripe with the steps below to have them arrive from Stripe directly.`;
    return (
      `Stripe is not connected. ${records} ` +
      `${canConnect ? 'Connect Stripe' : 'An owner can connect Stripe'} to have them arrive from Stripe directly.`
    );
  }
  if (stripe === 'not_connected' || stripe === 'disconnected')
    return besideStatus
      ? 'Outbound webhooks are paused until Stripe is connected, and events recorded meanwhile are not sent later.'
      : `Stripe is ${stripe === 'disconnected' ? 'disconnected' : 'not connected'}: outbound webhooks are paused until ` +
          'it is connected, and events recorded meanwhile are not sent later.';
  if (stripe === 'pending') {
    const then = sent
      ? 'outbound webhooks are sent meanwhile.'
      : 'outbound webhooks are paused until it arrives, and events recorded meanwhile are not sent later.';
    return besideStatus
      ? `${then[0]!.toUpperCase()}${then.slice(1)}`
      : `Stripe is set up and waiting for its first event${sent ? '; ' : ': '}${then}`;
  }
  if (refused)
    return (
      `${besideStatus ? "Stripe's" : 'Stripe is connected, but its'} events are not arriving: Stripe's deliveries ` +
      'are being refused for a bad signature. Check the signing secret: it must be the one of this endpoint in Stripe.'
    );
  return besideStatus
    ? "Stripe's events arrive by themselves and outbound webhooks are sent."
    : 'Stripe is connected: its events arrive by themselves and outbound webhooks are sent.';
}
