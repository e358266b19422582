import { lazy, Suspense, useEffect } from 'react';
import { Loading } from '../../components/states.js';
import { NavLink, navigate, pathOnly } from '../../router.js';
import { useSession } from '../../session.js';
import type { Me } from '../../api/types.js';
import { NotForYourRole } from './NotForYourRole.js';

const Tokens = lazy(() => import('./Tokens.js'));
const Webhooks = lazy(() => import('./Webhooks.js'));
const EndpointPage = lazy(() => import('./EndpointPage.js'));
const Team = lazy(() => import('./Team.js'));
const WorkspaceSettings = lazy(() => import('./WorkspaceSettings.js'));
const SecurityLog = lazy(() => import('./SecurityLog.js'));
const Processor = lazy(() => import('./Processor.js'));

/** The tabs only some roles have: what each shows, who may see it, and its permission. */
const RESTRICTED: Record<string, { what: string; who: string; allowed: (me: Me) => boolean }> = {
  '/settings/security-log': {
    what: 'The security log',
    who: 'owners and admins',
    allowed: (me) => me.permissions.read_security_log,
  },
  '/settings/processor': {
    what: 'The processor',
    who: 'owners',
    allowed: (me) => me.permissions.manage_processor,
  },
};

function page(path: string, me: Me) {
  const restricted = RESTRICTED[path];
  if (restricted && !restricted.allowed(me))
    return <NotForYourRole what={restricted.what} role={me.user.role} who={restricted.who} />;
  if (path === '/settings/tokens') return <Tokens />;
  if (path === '/settings/webhooks') return <Webhooks />;
  const endpoint = /^\/settings\/webhooks\/([^/]+)$/.exec(path);
  if (endpoint) return <EndpointPage id={endpoint[1]!} />;
  if (path === '/settings/team') return <Team />;
  if (path === '/settings/workspace') return <WorkspaceSettings />;
  if (path === '/settings/security-log') return <SecurityLog />;
  if (path === '/settings/processor') return <Processor />;
  return null;
}

export default function Settings({ path }: { path: string }) {
  const { me } = useSession();
  const route = pathOnly(path);
  const canReadLog = me.permissions.read_security_log;
  const canManageProcessor = me.permissions.manage_processor;
  const content = page(route, me);
  // /settings itself, or an address that is no tab: the first tab.
  useEffect(() => {
    if (!content) navigate('/settings/tokens', { replace: true });
  }, [content]);
  if (!content) return null;
  const links = [
    { to: '/settings/tokens', label: 'API tokens' },
    { to: '/settings/webhooks', label: 'Outbound webhooks' },
    { to: '/settings/team', label: 'Team' },
    { to: '/settings/workspace', label: 'Workspace' },
    ...(canReadLog ? [{ to: '/settings/security-log', label: 'Security log' }] : []),
    ...(canManageProcessor ? [{ to: '/settings/processor', label: 'Processor' }] : []),
  ];
  return (
    <div className="settings">
      <nav className="settings-nav" aria-label="Settings">
        <ul>
          {links.map((link) => (
            <li key={link.to}>
              <NavLink to={link.to} className="tab">
                {link.label}
              </NavLink>
            </li>
          ))}
        </ul>
      </nav>
      <div className="settings-body">
        <Suspense fallback={<Loading />}>{content}</Suspense>
      </div>
    </div>
  );
}
