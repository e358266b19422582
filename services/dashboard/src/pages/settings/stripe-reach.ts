import { isLocalHost } from '@retention/core/local-hosts';

/**
 * What stands between Stripe and the webhook URL this page gives, when something does: Stripe
 * sends events only to a public https address. The URL is made from the service's BASE_URL, so
 * `npm start` on a laptop shows `http://localhost:3000/…`, which Stripe cannot reach; saying so
 * here spares an owner an endpoint in Stripe that never delivers. Null when nothing stands.
 * `forwardTo`, when there is one, is the URL for the Stripe CLI's `stripe listen --forward-to`, to
 * try it here; the page shows that command after `text`.
 */
export function stripeReachNote(webhookUrl: string): { text: string; forwardTo?: string } | null {
  let url: URL;
  try {
    url = new URL(webhookUrl);
  } catch {
    return null;
  }
  if (isLocalHost(url.hostname)) {
    return {
      text:
        `Stripe cannot reach this URL: ${url.host} is this machine. Set BASE_URL to the service's public https ` +
        "address, or, to try it here, forward Stripe's events with the Stripe CLI:",
      forwardTo: webhookUrl,
    };
  }
  if (url.protocol !== 'https:') {
    return { text: "Stripe sends events only to an https URL: set BASE_URL to the service's https address." };
  }
  return null;
}
