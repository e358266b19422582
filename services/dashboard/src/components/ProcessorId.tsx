import type { ProcessorMode } from '@retention/core/processor-modes';
import { useSession } from '../session.js';
import { IdCode } from './IdCode.js';

/** The records Stripe's dashboard has a page for: the shape of the ids Stripe makes for them, and their path there. */
const STRIPE_PAGES = {
  customer: { id: /^cus_[A-Za-z0-9]{1,250}$/, path: 'customers' },
  subscription: { id: /^sub_[A-Za-z0-9]{1,250}$/, path: 'subscriptions' },
  invoice: { id: /^in_[A-Za-z0-9]{1,250}$/, path: 'invoices' },
} as const;

type StripeRecord = keyof typeof STRIPE_PAGES;

/**
 * The page of a record in Stripe's dashboard, in the connection's mode (test-mode pages are under
 * /test), or null when the id is not one Stripe makes for that kind of record: records brought in
 * by the operator CLI or the demo carry ids of their own, which no Stripe page has.
 */
function stripeDashboardUrl(mode: ProcessorMode, record: StripeRecord, id: string): string | null {
  const page = STRIPE_PAGES[record];
  if (!page.id.test(id)) return null;
  return `https://dashboard.stripe.com/${mode === 'test' ? 'test/' : ''}${page.path}/${id}`;
}

/**
 * A processor id as the detail pages show it, with a link to its page in Stripe's dashboard
 * when the workspace is connected to Stripe (docs/dashboard-ui.md, "View in Stripe"): a support
 * agent looking at a failed invoice goes on in Stripe without copying the id into its search.
 * It opens in a new tab, and says so; Stripe's sign-in decides who may see the page.
 */
export function ProcessorId({ id, record }: { id: string; record: StripeRecord }) {
  const { me } = useSession();
  const mode = me.workspace.stripe_mode;
  const url = mode && stripeDashboardUrl(mode, record, id);
  return (
    <>
      <IdCode id={id} />
      {url && (
        <>
          {' '}
          <a href={url} target="_blank" rel="noopener noreferrer">
            View {record} in Stripe<span className="visually-hidden"> (opens in a new tab)</span>
          </a>
        </>
      )}
    </>
  );
}
