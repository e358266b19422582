import { lazy, Suspense, useEffect } from 'react';
import { Loading } from '../../components/states.js';
import { NavLink, navigate, pathOnly } from '../../router.js';
import { useSession } from '../../session.js';

const Tokens = lazy(() => import('./Tokens.js'));
const Webhooks = lazy(() => import('./Webhooks.js'));
const EndpointPage = lazy(() => import('./EndpointPage.js'));
const Team = lazy(() => import('./Team.js'));
const WorkspaceSettings = lazy(() => import('./WorkspaceSettings.js'));
const SecurityLog = lazy(() => import('./SecurityLog.js'));
const Processor = lazy(() => import('./Processor.js'));

function page(path: string, canReadLog: boolean, canManageProcessor: boolean) {
  if (path === '/settings/tokens') return <Tokens />;
  if (path === '/settings/webhooks') return <Webhooks />;
  const endpoint = /^\/settings\/webhooks\/([^/]+)$/.exec(path);
  if (endpoint) return <EndpointPage id={endpoint[1]!} />;
  if (path === '/settings/team') return <Team />;
  if (path === '/settings/workspace') return <WorkspaceSettings />;
  if (path === '/settings/security-log' && canReadLog) return <SecurityLog />;
  if (path === '/settings/processor' && canManageProcessor) return <Processor />;
  return null;
}

export default function Settings({ path }: { path: string }) {
  const { me } = useSession();
  const route = pathOnly(path);
  const canReadLog = me.permissions.read_security_log;
  const canManageProcessor = me.permissions.manage_processor;
  const content = page(route, canReadLog, canManageProcessor);
  // /settings itself, or a tab this role does not have: the first tab.
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
