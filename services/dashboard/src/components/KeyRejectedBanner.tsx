import { Link, pathOnly, usePath } from '../router.js';
import { useSession } from '../session.js';

const PROCESSOR_PAGE = '/settings/processor';

/**
 * Across every page, for owners and admins: Stripe refused the workspace's API key (401), so the
 * connection is disconnected and outbound webhooks are paused (docs/processor.md, "Status"). It
 * was said on Settings, Processor alone, which owners open rarely, while their receivers got
 * nothing. An owner is linked to the Processor page (on that page, told to connect again below);
 * an admin, who cannot open it, is told who can.
 * Styled as the page-wide warning an endpoint turned off has (`.banner`), with its space below.
 */
export function KeyRejectedBanner() {
  const { me } = useSession();
  const role = me.user.role;
  const onProcessorPage = pathOnly(usePath()) === PROCESSOR_PAGE;
  if (!me.workspace.processor_key_rejected || (role !== 'owner' && role !== 'admin')) return null;
  return (
    <div className="banner" role="alert" aria-label="Stripe refused the API key">
      Outbound webhooks are paused: Stripe refused this workspace&rsquo;s API key (it was rolled or revoked in Stripe),
      so Stripe is disconnected and events recorded meanwhile are not sent, then or later.{' '}
      {role === 'owner' ? (
        onProcessorPage ? (
          // Not a link to the page it is on, which only reloaded it.
          'Connect again below with a new restricted key.'
        ) : (
          <>
            Connect again with a new restricted key on the <Link to={PROCESSOR_PAGE}>Processor page</Link>.
          </>
        )
      ) : (
        'An owner can connect again with a new restricted key on the Processor page.'
      )}
    </div>
  );
}
