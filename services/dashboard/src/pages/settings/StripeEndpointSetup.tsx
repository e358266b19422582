import { useState, type ReactNode } from 'react';
import type { ProcessorMode } from '@retention/core/processor-modes';

/**
 * A page of Stripe's dashboard, in the connection's mode when it is known (test-mode pages are
 * under /test), else both: before the first key or event the page cannot tell which the owner
 * uses. Opens in a new tab, and says so, as "View in Stripe" does.
 */
export function StripeLink({
  path,
  mode,
  children,
}: {
  path: string;
  mode: ProcessorMode | null;
  children: ReactNode;
}) {
  const link = (test: boolean, text: ReactNode) => (
    <a href={`https://dashboard.stripe.com/${test ? 'test/' : ''}${path}`} target="_blank" rel="noopener noreferrer">
      {text}
      <span className="visually-hidden"> (opens in a new tab)</span>
    </a>
  );
  if (mode) return link(mode === 'test', children);
  return (
    <>
      {link(false, children)} ({link(true, 'test mode')})
    </>
  );
}

/**
 * What to select on the webhook endpoint in Stripe (docs/processor.md, "The endpoint in Stripe"):
 * exactly the event types the service applies (`stripe_event_types` of GET /processor, the
 * adapter's own list, so the page cannot name one it ignores or miss one it needs), with a button
 * that copies them, one a line, to tick off in Stripe or hand to a colleague.
 */
export function StripeEventTypes({ eventTypes }: { eventTypes: readonly string[] }) {
  const [copied, setCopied] = useState<'yes' | 'failed' | null>(null);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(eventTypes.join('\n'));
      setCopied('yes');
    } catch {
      setCopied('failed');
    }
  };
  return (
    <>
      <div className="copy-row">
        <button type="button" className="button small" onClick={() => void copy()}>
          Copy event list
        </button>
        <span className="hint" role="status">
          {copied === 'yes'
            ? `Copied the ${eventTypes.length} events, one a line.`
            : copied === 'failed'
              ? 'Select the events below and copy them.'
              : ''}
        </span>
      </div>
      <ul aria-label="Events to select in Stripe" className="event-type-list">
        {eventTypes.map((type) => (
          <li key={type}>
            <code>{type}</code>
          </li>
        ))}
      </ul>
    </>
  );
}
