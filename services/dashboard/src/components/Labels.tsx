import { BreakAfterSeparators } from './BreakableUrl.js';
import { declineCategoryLabel, declineCodeLabel, eventTypeLabel, securityActionLabel } from '../labels.js';

/** An event type as people read it, its code beside it for the engineer who reads webhooks. */
export function EventTypeName({ type }: { type: string }) {
  return (
    <>
      <strong>{eventTypeLabel(type)}</strong> <code className="code-aside">{type}</code>
    </>
  );
}

/**
 * An event type in words, as the Security log says it, and under them its code, smaller, quieter
 * and monospace, for the engineer who matches it in a receiver (an endpoint's events, a delivery
 * log row). The code wraps after its dot or underscore in a narrow column (`recovery.` / `opened`).
 */
export function EventTypeWithCode({ type }: { type: string }) {
  return (
    <>
      <span>{eventTypeLabel(type)}</span>{' '}
      <code className="secondary">
        <BreakAfterSeparators text={type} />
      </code>
    </>
  );
}

/**
 * A security log action in words, its recorded code on a quieter line under it; an unknown code
 * alone. In the log's narrow Action column a long code goes onto another line after its dot or
 * an underscore (`processor.` / `mode_switched`), not mid-word.
 */
export function SecurityActionName({ action }: { action: string }) {
  const words = securityActionLabel(action);
  const code = <BreakAfterSeparators text={action} />;
  if (words === action) return <code>{code}</code>;
  return (
    <>
      <span>{words}</span>
      <code className="secondary">{code}</code>
    </>
  );
}

/** Why a payment was declined, in words; under it its category and the processor's code. */
export function DeclineReason({ code, category }: { code: string; category: string }) {
  return (
    <>
      {declineCodeLabel(code)}
      <span className="secondary">
        {declineCategoryLabel(category)} · <code>{code}</code>
      </span>
    </>
  );
}
