/**
 * Links to the API reference, which the API serves on this same origin (services/api's
 * routes/documentation.ts): engineers on the API tokens and Outbound webhooks pages had no path
 * to it. They open in a new tab, and say so, as View in Stripe does: a secret shown once must not
 * be navigated away from.
 */
const API_REFERENCE = '/docs';

/**
 * The reference's section on checking a delivery's signature: its anchor is the one docs-page.ts
 * gives the webhooks description's "### Verifying the signature" heading.
 */
const VERIFYING_THE_SIGNATURE = `${API_REFERENCE}#webhooks-verifying-the-signature`;

/** The header a delivery's signature comes in (packages/core's SIGNATURE_HEADER). */
const SIGNATURE_HEADER = 'X-Service-Signature';

function NewTabLink({ href, children }: { href: string; children: string }) {
  return (
    <a href={href} target="_blank" rel="noopener noreferrer">
      {children}
      <span className="visually-hidden"> (opens in a new tab)</span>
    </a>
  );
}

/**
 * One line under a settings page's introduction: where the rest of what it is about is told.
 * `section`: the reference's part to open at (`webhooks`: its Webhooks section).
 */
export function ApiReferenceLine({ about, section }: { about: string; section?: 'webhooks' }) {
  return (
    <p className="muted">
      {about}: see the{' '}
      <NewTabLink href={section ? `${API_REFERENCE}#${section}` : API_REFERENCE}>API reference</NewTabLink>.
    </p>
  );
}

/** What a signing secret is for, where it is shown once: the header it signs, and how to check it. */
export function SignatureHowTo() {
  return (
    <p>
      Each delivery carries its signature in the <code>{SIGNATURE_HEADER}</code> header. Check it with this secret
      before trusting the body: our SDK’s <code>verifyWebhook</code> (<code>@retention/sdk</code>) does it, and{' '}
      <NewTabLink href={VERIFYING_THE_SIGNATURE}>Verifying the signature</NewTabLink> in the API reference shows how,
      with code.
    </p>
  );
}
