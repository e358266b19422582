/**
 * What to select on the webhook endpoint in Stripe (docs/processor.md, "The endpoint in Stripe"):
 * exactly the event types the service applies (`stripe_event_types` of GET /processor, the
 * adapter's own list, so the page cannot name one it ignores or miss one it needs), and the
 * endpoint's API version, which Stripe asks for when the endpoint is created.
 */
export function StripeEndpointSetup({ eventTypes }: { eventTypes: readonly string[] }) {
  return (
    <div className="stack">
      <h3 id="stripe-event-types">Events to select in Stripe</h3>
      <p className="hint">
        Select these on the endpoint (&ldquo;Select events&rdquo;); any other event Stripe sends is received and
        ignored.
      </p>
      <ul aria-labelledby="stripe-event-types" className="event-type-list">
        {eventTypes.map((type) => (
          <li key={type}>
            <code>{type}</code>
          </li>
        ))}
      </ul>
      <p className="hint" role="note" aria-label="The endpoint's API version">
        Any API version of the endpoint works: invoices in the shape before 2025-03-31 (basil), with their subscription
        and payment intent on the invoice, and in the shape from basil on are both read. Stripe sends an
        endpoint&rsquo;s events in the version it was created with, so an existing endpoint need not be replaced.
      </p>
    </div>
  );
}
