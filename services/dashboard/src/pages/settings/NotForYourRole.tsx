import { PageHeader } from '../../components/states.js';
import { Link } from '../../router.js';

/**
 * A Settings tab the viewer's role cannot see, opened by its address (a bookmark, a shared link):
 * said in its heading, so in the tab's title too, with the roles that can, rather than silently
 * showing another tab under that tab's name.
 */
export function NotForYourRole({ what, role, who }: { what: string; role: string; who: string }) {
  return (
    <>
      <PageHeader title={`${what} is not shown to ${role}s`} />
      <p>Only {who} can see it.</p>
      <p>
        <Link to="/settings">Back to Settings</Link>
      </p>
    </>
  );
}
