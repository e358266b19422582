/**
 * One account of the workspace's payment processor, for the Workspace and Processor pages alike.
 * Two things are told apart (docs/processor.md): the workspace's processor status, the flag that
 * decides whether outbound webhooks are sent, and a Stripe connection, which sets that flag but is
 * not the only way to (the operator CLI, fixtures and the demo set it with no Stripe behind it).
 * The pages used to tell these in their own words, and so contradicted each other: "Status: Not
 * connected" on one, "counts as connected" on the other.
 */

/**
 * What GET /processor says of Stripe (its `status`), declared here only: the Processor page's
 * types of that answer take theirs from it. `undefined` below where it is not known.
 */
export type StripeStatus = 'not_connected' | 'pending' | 'connected' | 'disconnected';

export const STRIPE_STATUS_TEXT: Record<StripeStatus, string> = {
  not_connected: 'Not connected',
  pending: 'Waiting for the first event from Stripe',
  connected: 'Connected and syncing',
  disconnected: 'Disconnected',
};

export function processorStory(flag: string, stripe: StripeStatus | undefined): string {
  const sent = flag === 'connected';
  if (stripe === 'not_connected' && sent)
    return (
      'Stripe is not connected, but outbound webhooks are sent: whoever runs this service marked the payment ' +
      "processor connected and imports this workspace's records. Connect Stripe to have them arrive by themselves."
    );
  if (stripe === 'not_connected' || stripe === 'disconnected')
    return `Stripe is ${stripe === 'disconnected' ? 'disconnected' : 'not connected'}: outbound webhooks are not sent until it is connected.`;
  if (stripe === 'pending')
    return sent
      ? 'Stripe is set up and waiting for its first event; outbound webhooks are sent meanwhile.'
      : 'Stripe is set up and waiting for its first event: outbound webhooks are sent once it arrives.';
  if (stripe === 'connected')
    return 'Stripe is connected: its events arrive by themselves and outbound webhooks are sent.';
  // A role that cannot see the Processor page: the flag alone.
  return sent
    ? "Outbound webhooks are sent: the workspace's payment processor is connected."
    : 'Outbound webhooks are not sent until the payment processor is connected.';
}
